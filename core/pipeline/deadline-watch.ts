import { isCancelled, type CancelSource } from './cancel-source.js';

/**
 * A call whose time limit and caller's stop are watched: the running call itself extends this, and the
 * watch links it into its list, so that watching and clearing allocate nothing (a Set shrinking back
 * to empty after every call did).
 */
export abstract class Watched {
  abstract readonly deadline: number;
  abstract readonly cancel: CancelSource | undefined;
  abstract onTimeout(): void;
  abstract onCancel(): void;
  /** The watch's links; only DeadlineWatch touches them. */
  watchPrevious: Watched | undefined = undefined;
  watchNext: Watched | undefined = undefined;
  watched = false;
}

/**
 * Time limits and cancellation for many in-flight calls with one interval instead of a timer and a
 * listener per call, which allocate more than the rest of a read action's path. A deadline or a
 * cancellation is noticed within one tick; the interval stops once nothing is watched and never
 * keeps the process alive.
 */
export class DeadlineWatch {
  private first: Watched | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tickMs = 20) {}

  watch(entry: Watched): void {
    if (entry.watched) return;
    entry.watched = true;
    entry.watchPrevious = undefined;
    entry.watchNext = this.first;
    if (this.first) this.first.watchPrevious = entry;
    this.first = entry;
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
  }

  clear(entry: Watched): void {
    if (!entry.watched) return;
    entry.watched = false;
    if (entry.watchPrevious) entry.watchPrevious.watchNext = entry.watchNext;
    else this.first = entry.watchNext;
    if (entry.watchNext) entry.watchNext.watchPrevious = entry.watchPrevious;
    entry.watchPrevious = undefined;
    entry.watchNext = undefined;
  }

  private tick(): void {
    if (!this.first) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    for (let entry: Watched | undefined = this.first; entry;) {
      // Read before the callbacks, which may clear this entry (and only this one: they settle their own call).
      const next: Watched | undefined = entry.watchNext;
      if (entry.cancel && isCancelled(entry.cancel)) {
        this.clear(entry);
        entry.onCancel();
      } else if (entry.deadline <= now) {
        this.clear(entry);
        entry.onTimeout();
      }
      entry = next;
    }
  }
}
