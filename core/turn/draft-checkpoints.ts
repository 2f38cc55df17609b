import type { ActiveTurn } from '../session/session-types.js';

/**
 * The answer streamed so far, saved as the turn's draft at most once a second (REFERENCE.md §5, step
 * 7): a kernel killed in the middle of a long answer keeps what the person saw of it. The first save
 * comes a second into the request, so a short answer costs no save of its own; a save under way is
 * never doubled (the stream does not wait for it).
 */
export class DraftCheckpoints {
  private text = '';
  private last = Date.now();
  private saving: Promise<void> | undefined;
  /** A save of text that came within the second, for when nothing more comes (reasoning, a call's arguments). */
  private trailing: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(private readonly turn: ActiveTurn, private readonly roundID: string, private readonly save: () => Promise<void>, private readonly intervalMs = 1000) {}

  add(delta: string): void {
    this.text += delta;
    this.saveSoon();
  }

  private saveSoon(): void {
    if (this.ended || this.trailing) return;
    const now = Date.now();
    if (this.saving || now - this.last < this.intervalMs) {
      this.trailing = setTimeout(() => { this.trailing = undefined; this.saveSoon(); }, Math.max(50, this.intervalMs - (now - this.last)));
      this.trailing.unref();
      return;
    }
    if (this.turn.draftContent === this.text) return;
    this.last = now;
    this.turn.draftContent = this.text;
    this.turn.draftRoundID = this.roundID;
    // A failed draft save loses nothing the round's own saves will not write.
    this.saving = this.save().catch(() => undefined).finally(() => { this.saving = undefined; });
  }

  /**
   * The request is over: its text becomes the round's message (or, for a round that failed or was
   * stopped, the draft its caller sets). Waits for a save under way, so that none lands after the next.
   */
  async end(): Promise<void> {
    this.ended = true;
    clearTimeout(this.trailing);
    this.trailing = undefined;
    await this.saving;
    this.turn.draftContent = '';
    delete this.turn.draftRoundID;
  }
}
