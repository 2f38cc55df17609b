import { isCancelled, type CancelSource } from './cancel-source.js';

interface Watched {
  deadline: number;
  cancel: CancelSource | undefined;
  onTimeout(): void;
  onCancel(): void;
}

/**
 * Time limits and cancellation for many in-flight calls with one interval instead of a timer and a
 * listener per call, which allocate more than the rest of a read action's path. A deadline or a
 * cancellation is noticed within one tick; the interval stops once nothing is watched and never
 * keeps the process alive.
 */
export class DeadlineWatch {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tickMs = 20) {}

  watch(entry: Omit<Watched, 'deadline'> & { timeoutMs: number }): Watched {
    const watched: Watched = { deadline: Date.now() + entry.timeoutMs, cancel: entry.cancel, onTimeout: entry.onTimeout, onCancel: entry.onCancel };
    this.watched.add(watched);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
    return watched;
  }

  clear(entry: Watched): void {
    this.watched.delete(entry);
  }

  private tick(): void {
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    for (const entry of this.watched) {
      if (entry.cancel && isCancelled(entry.cancel)) {
        this.watched.delete(entry);
        entry.onCancel();
      } else if (entry.deadline <= now) {
        this.watched.delete(entry);
        entry.onTimeout();
      }
    }
  }
}
