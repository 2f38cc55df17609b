import type { BlockStore } from './block-store.js';
import { isKernelError } from '../../core/index.js';
import { sweepTempFiles } from './temp-sweep.js';
import { syncWithFiles, type SyncOptions, type SyncReport } from './workspace-sync.js';

/**
 * Tracks the syncs of the index with data/. Actions wait for the start-up sync; one that failed is
 * tried again (in full) by the next call rather than failing every call for the life of the kernel.
 * While a sync runs, or after one failed, `syncing` is true: the gate's notebook scope must not guess then.
 */
export class Readiness {
  private running = 0;
  /** False until a sync has succeeded, and again after one fails: the index may then be incomplete. */
  private healthy = false;
  private current: Promise<unknown>;
  /** Whether data/ was rid of the temporary files of killed writes: once, before the first sync. */
  private swept = false;
  private readonly sweeping: Promise<unknown>;
  /** Whether the sync that failed last was a full one: its retry is of the same kind. */
  private retryFull = true;
  /** A document's file holds a write its index rows do not, until a sync succeeds. */
  private behindFiles = false;
  /** Work putting files back (`changingFiles`), in the write queue or running: actions wait for it. */
  private readonly changing = new Set<Promise<void>>();

  /** `otherFolders`: more folders to rid of such files (history, sessions), in the background. */
  constructor(private readonly store: BlockStore, full: boolean, then: (report: SyncReport) => Promise<void>, otherFolders: readonly string[] = []) {
    this.current = this.sync(full).then(then);
    this.current.catch(() => undefined);
    this.sweeping = Promise.all(otherFolders.map((folder) => this.sweep(folder)));
  }

  /**
   * True while the index may lack blocks that are in the files: a sync is running, or none has
   * succeeded since the last failure (in which case a new one is started, so that callers who are
   * refused meanwhile, like the gate's, are not refused for ever).
   */
  indexIncomplete(): boolean {
    if (this.running === 0 && !this.healthy) {
      this.current = this.sync(this.retryFull);
      this.current.catch(() => undefined);
    }
    return this.running > 0 || !this.healthy;
  }

  /** A sync in the write queue: after every write queued before it, before every one queued after. */
  sync(full: boolean, options: Omit<SyncOptions, 'full'> = {}): Promise<SyncReport> {
    this.running++;
    return this.store.queue.run(async () => {
      // In the write queue, so that no write of ours is under way while data/ is swept.
      if (!this.swept) {
        this.swept = true;
        await this.sweep(this.store.dataDir);
      }
      return syncWithFiles(this.store, { ...options, full });
    })
      // A sync stopped on request was rolled back whole: the index is as healthy as it was before.
      .then((report) => {
        this.healthy = true;
        this.behindFiles = false;
        return report;
      }, (error: unknown) => {
        if (!isStop(error)) {
          this.healthy = false;
          this.retryFull = full;
        }
        throw error;
      })
      .finally(() => { this.running--; });
  }

  /**
   * After a document's write: `ok` false when its file took the write and its index rows did not (a
   * full disk, a row that cannot be written). Until a sync has caught up the index is incomplete (the
   * gate waits rather than guess); an incremental sync finds the document by its file's size and time
   * of change. Should that fail too, the next write whose rows go in (there is room again) or the gate's
   * next check tries again. Actions do not wait for it: on a full disk, reads go on.
   */
  indexWritten(ok: boolean): void {
    if (ok && !this.behindFiles) return;
    if (!ok) {
      this.behindFiles = true;
      this.healthy = false;
      this.retryFull = false;
    }
    if (this.running > 0) return;
    this.sync(false).catch(() => undefined);
  }

  /**
   * Work that changes data/ and then brings the index in line (a snapshot or history rollback): while it
   * waits and runs the index may lack what the files hold, so the gate waits rather than guess.
   */
  async changingFiles<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    const run = work();
    const settled = run.then(() => undefined, () => undefined);
    this.changing.add(settled);
    try {
      return await run;
    } finally {
      this.running--;
      this.changing.delete(settled);
    }
  }

  async wait(): Promise<void> {
    const awaited = this.current;
    try {
      await awaited;
    } catch {
      if (this.current === awaited) this.current = this.sync(this.retryFull);
      await this.current;
    }
    // An action waits too for a rollback putting files back (and one a crash cut short, finished at the
    // start): read meanwhile, the notes were part old, part new, for as long as it took (9 s at 30k files).
    while (this.changing.size > 0) await Promise.all(this.changing);
  }

  /** Settles once the start-up sync and sweeps have (for closing the plugin). */
  settled(): Promise<void> {
    return Promise.all([this.current, this.sweeping]).then(() => undefined, () => undefined);
  }

  private async sweep(folder: string): Promise<void> {
    const removed = await sweepTempFiles(folder);
    if (removed.length > 0) this.store.log.warn('removed temporary files left by interrupted writes', { folder, files: removed.slice(0, 20), count: removed.length });
  }
}

const isStop = (error: unknown): boolean => isKernelError(error) && (error.code === 'ACTION_TIMEOUT' || error.code === 'ACTION_CANCELLED');
