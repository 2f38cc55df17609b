import { throwIfStopped, type ActionCall } from '../../core/index.js';

/**
 * Runs writes one at a time, in arrival order. Every write reads, changes and writes back whole
 * files, so two at once on the same document would lose one; one queue for the workspace also keeps
 * moves between documents and notebooks free of lock-ordering questions.
 */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /**
   * Queues `task`. With the call it is made for, its turn is a safe point: a call stopped (time limit,
   * cancel) while it waited writes nothing and answers why, rather than writing after its answer.
   */
  run<T>(task: () => Promise<T>, call?: Pick<ActionCall, 'stopped'>): Promise<T> {
    this.waiting++;
    const result = this.tail.then(call ? () => { throwIfStopped(call, 'The write (nothing was written)'); return task(); } : task);
    this.tail = result.then(() => undefined, () => undefined).finally(() => { this.waiting--; });
    return result;
  }

  /** Resolves once every write queued so far has finished. */
  async idle(): Promise<void> {
    while (this.waiting > 0) await this.tail;
  }
}
