import { describe, expect, it } from 'vitest';
import { boundedEventStream } from '../../../core/mcp/bounded-event-stream.js';

/** A source that enqueues as fast as it is asked, without looking at backpressure (as the SDK does), and says when it is cancelled. */
function eager(chunks: number, size: number) {
  let cancelled: unknown;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) { controller = c; },
    cancel(reason) { cancelled = reason; },
  });
  return {
    stream,
    push: () => { for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(size)); },
    close: () => controller.close(),
    cancelled: () => cancelled,
  };
}

describe('an MCP event stream for a client that does not read', () => {
  it('ends once the unread events pass the limit, cancelling the source, and says so once', async () => {
    const source = eager(64, 1024);
    let ends = 0;
    const passed = boundedEventStream(source.stream, () => { ends++; }, 16 * 1024);
    source.push();
    // Nobody reads until the source has been cancelled (events are taken from it as they come).
    for (let i = 0; i < 100 && source.cancelled() === undefined; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(String(source.cancelled())).toMatch(/read nothing of \d+ bytes/);
    const reader = passed.getReader();
    await expect(reader.read()).rejects.toThrow(/read nothing/);
    expect(ends).toBe(1);
  });

  it('passes every event on, in order, to a client that reads, and ends with the source', async () => {
    const source = eager(3, 4);
    let ends = 0;
    const passed = boundedEventStream(source.stream, () => { ends++; }, 1024);
    source.push();
    source.close();
    const reader = passed.getReader();
    const got: number[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      got.push(value.length);
    }
    expect(got).toEqual([4, 4, 4]);
    expect(ends).toBe(1);
  });
});
