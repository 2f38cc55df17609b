import type { BlockStore } from './block-store.js';
import { syncWithFiles, type SyncReport } from './workspace-sync.js';

/**
 * Tracks the syncs of the index with data/. Actions wait for the start-up sync; one that failed is
 * tried again (in full) by the next call rather than failing every call for the life of the kernel.
 * While any sync runs, `syncing` is true: the gate's notebook scope must not guess then.
 */
export class Readiness {
  private running = 0;
  private current: Promise<unknown>;

  constructor(private readonly store: BlockStore, full: boolean, then: (report: SyncReport) => Promise<void>) {
    this.current = this.sync(full).then(then);
    this.current.catch(() => undefined);
  }

  get syncing(): boolean {
    return this.running > 0;
  }

  /** A sync in the write queue: after every write queued before it, before every one queued after. */
  sync(full: boolean): Promise<SyncReport> {
    this.running++;
    return this.store.queue.run(() => syncWithFiles(this.store, { full })).finally(() => { this.running--; });
  }

  async wait(): Promise<void> {
    const awaited = this.current;
    try {
      await awaited;
    } catch {
      if (this.current === awaited) this.current = this.sync(true);
      await this.current;
    }
  }

  /** Settles once the start-up sync has (for closing the plugin). */
  settled(): Promise<void> {
    return this.current.then(() => undefined, () => undefined);
  }
}
