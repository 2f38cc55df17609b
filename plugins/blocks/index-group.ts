import type { BlockIndex } from './block-index.js';

interface Waiting {
  work: () => void;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Index writes of different documents that become ready at the same time (their files durable within
 * one turn of the event loop) share one transaction, so one commit (and one flush of the full-text
 * index's pending terms) serves all of them: group commit. They run without a savepoint each: a
 * savepoint makes the full-text table flush its pending terms on release, one segment per document
 * instead of one per commit, and cost the 50-writer benchmark about 50 µs of the event loop per append.
 * Should one fail, the whole transaction is rolled back and the group written again with a savepoint
 * per document, so the failing one is answered alone while the others commit; a commit that fails
 * fails them all, as each would have alone. A lone write waits one turn of the event loop, nothing more.
 */
export class IndexGroup {
  private waiting: Waiting[] = [];

  constructor(private readonly index: BlockIndex) {}

  /**
   * Runs `work` (synchronous index statements) in the next group, inside its transaction or a savepoint,
   * either rolled back if `work` throws: it must open no transaction of its own.
   */
  run(work: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ work, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.waiting;
    this.waiting = [];
    try {
      this.index.transaction(() => {
        for (const item of group) item.work();
      });
    } catch {
      // Rolled back whole (a failure is rare: a poisoned row, a full disk): written again, carefully,
      // where the failing document's own savepoint answers it with its error.
      this.flushCarefully(group);
      return;
    }
    for (const item of group) item.resolve();
  }

  /** Each document in a savepoint of its own, rolled back alone if its statements fail. */
  private flushCarefully(group: readonly Waiting[]): void {
    const failures = new Map<Waiting, unknown>();
    try {
      this.index.transaction(() => {
        for (const item of group) {
          try {
            // A nested transaction is a savepoint.
            this.index.transaction(item.work);
          } catch (error) {
            failures.set(item, error);
            // Some errors (a full disk, an I/O error) make SQLite roll back the whole transaction: the
            // documents after this one would each commit alone, and the group's commit then fail.
            if (!this.index.db.inTransaction) throw error;
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
