import type { BlockIndex } from './block-index.js';

interface Waiting {
  work: () => void;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Index writes of different documents that become ready at the same time (their files durable within
 * one turn of the event loop) share one transaction, so one commit (and one flush of the full-text
 * index's pending terms) serves all of them: group commit. Each keeps its own savepoint, so one that
 * fails is rolled back and answered alone while the others commit; a commit that fails fails them all,
 * as each would have alone. A lone write waits one turn of the event loop, nothing more.
 */
export class IndexGroup {
  private waiting: Waiting[] = [];

  constructor(private readonly index: BlockIndex) {}

  /** Runs `work` (synchronous index statements) in the next group. */
  run(work: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ work, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.waiting;
    this.waiting = [];
    const failures = new Map<Waiting, unknown>();
    try {
      this.index.transaction(() => {
        for (const item of group) {
          try {
            // A nested transaction is a savepoint: rolled back alone if this document's statements fail.
            this.index.transaction(item.work);
          } catch (error) {
            failures.set(item, error);
          }
        }
      });
    } catch (error) {
      for (const item of group) item.reject(failures.get(item) ?? error);
      return;
    }
    for (const item of group) {
      if (failures.has(item)) item.reject(failures.get(item));
      else item.resolve();
    }
  }
}
