import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../../core/http/event-queue.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';

describe("a turn's events on their way to a slow client", () => {
  it('joins the text deltas waiting behind a slow write, keeps the order and every character', async () => {
    const written: TurnEvent[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => { release = resolve; });
    let first = true;
    const queue = new EventQueue(async (event) => {
      if (first) {
        first = false;
        await blocked;
      }
      written.push(event);
    });
    queue.push({ type: 'turn', turnID: 't1' } as TurnEvent);
    // The client reads nothing meanwhile: 10,000 deltas wait as one event, not 10,000.
    for (let i = 0; i < 10_000; i++) queue.push({ type: 'content', roundID: 'r1', delta: 'ab' });
    queue.push({ type: 'progress', roundID: 'r1', toolCallID: 'c1', progress: { done: 1 } } as TurnEvent);
    queue.push({ type: 'progress', roundID: 'r1', toolCallID: 'c1', progress: { done: 2 } } as TurnEvent);
    queue.push({ type: 'content', roundID: 'r2', delta: 'next round' });
    release();
    await queue.drained();
    expect(written.map((event) => event.type)).toEqual(['turn', 'content', 'progress', 'content']);
    expect((written[1] as { delta: string }).delta).toBe('ab'.repeat(10_000));
    expect((written[2] as { progress: { done: number } }).progress.done).toBe(2);
    expect((written[3] as { delta: string }).delta).toBe('next round');
  });

  it('stops keeping anything once a write fails (the client left)', async () => {
    let writes = 0;
    const queue = new EventQueue(async () => {
      writes++;
      throw new Error('the stream is closed');
    });
    queue.push({ type: 'content', roundID: 'r1', delta: 'a' });
    await queue.drained();
    queue.push({ type: 'content', roundID: 'r1', delta: 'b' });
    await queue.drained();
    expect(writes).toBe(1);
  });
});
