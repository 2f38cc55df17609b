import type { TurnEvent } from '../turn/turn-events.js';

/**
 * A turn's events on their way to a client that may read slowly or not at all (a suspended laptop's
 * tab stays connected): each write waits for the one before. What waits is kept small: text deltas of
 * one round and kind are joined into the one already waiting, and a progress report replaces the
 * waiting one of its call, so what is held grows with the turn's text, not with its events (a promise
 * per delta was chained before, every one of them held).
 */
export class EventQueue {
  private readonly waiting: TurnEvent[] = [];
  private writing: Promise<void> | undefined;
  /** A write failed: the client is gone, and nothing more is kept for it. */
  private gone = false;

  constructor(private readonly write: (event: TurnEvent) => Promise<unknown>) {}

  push(event: TurnEvent): void {
    if (this.gone) return;
    const last = this.waiting.at(-1);
    if (last && (event.type === 'content' || event.type === 'reasoning') && last.type === event.type && last.roundID === event.roundID) {
      last.delta += event.delta;
      return;
    }
    if (event.type === 'progress') {
      const earlier = this.waiting.findIndex((queued) => queued.type === 'progress' && queued.toolCallID === event.toolCallID);
      if (earlier !== -1) this.waiting.splice(earlier, 1);
    }
    this.waiting.push({ ...event });
    this.writing ??= this.drain();
  }

  /** Resolves once every event pushed so far is written (or the client is gone). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    // Never synchronously: a write that throws at once would end this before `writing` is set, and
    // `writing` would then hold a settled promise for ever (drained() would spin on it).
    await null;
    try {
      for (let event = this.waiting.shift(); event; event = this.waiting.shift()) await this.write(event);
    } catch {
      // The client left: nothing more is written, and the turn goes on.
      this.gone = true;
      this.waiting.length = 0;
    } finally {
      this.writing = undefined;
    }
  }
}
