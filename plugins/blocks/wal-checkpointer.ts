import type { Worker } from 'node:worker_threads';
import { compiledScript, startWorker, type Logger } from '../../core/index.js';
import type { Db } from './index-schema.js';

/** SQLite's own: the committing connection checkpoints once the log holds this many pages. */
const SQLITE_AUTOCHECKPOINT = 1000;
/**
 * With the worker, the writer still checkpoints past this many pages, and copies then only what the
 * worker has not yet. A log is started again from its beginning only by a writer that finds every page
 * of it copied, which a checkpoint on another thread, between two commits of a steady stream, almost
 * never leaves it: without this the log grew to 314 MiB in 8 s of commits every 2 ms.
 */
const WRITER_BACKSTOP_PAGES = 4000;
/** The log file is cut back to this size when it starts again (it kept its largest size until closed). */
const LOG_SIZE_LIMIT_BYTES = 16 * 2 ** 20;
const INTERVAL_MS = 200;
/** Checkpoints failing in a row after which the worker ends and the writer checkpoints alone. */
const FAILURES_TO_GIVE_UP = 3;
/** How long stop() waits for the worker's last checkpoint before ending it. */
const STOP_WAIT_MS = 5_000;

/**
 * Checkpoints of the index off the event loop. SQLite checkpoints inside the commit that takes the
 * write-ahead log past 1,000 pages, on the connection that made it: it copies the pages into the
 * database file and syncs it there, on the thread that answers every request. Under 50 concurrent
 * writers that was a commit of 10 to 17 ms every few dozen commits, every request waiting, and longer
 * when the disk stalls. Here a worker with a connection of its own runs a passive checkpoint every
 * INTERVAL_MS, which waits for no one, and the writer checkpoints only past WRITER_BACKSTOP_PAGES. If the
 * worker cannot start, fails or ends, the writer checkpoints as SQLite does by default, and says so.
 */
export class WalCheckpointer {
  private stopping = false;
  private exited = false;

  private constructor(private readonly worker: Worker | undefined) {}

  static start(writer: Db, file: string, log: Logger): WalCheckpointer {
    const script = compiledScript(import.meta.url, 'wal-checkpoint-worker.js', '../../dist/plugins/blocks/wal-checkpoint-worker.js');
    // The sources under a test runner, without a build: the writer checkpoints itself, as by default.
    if (!script) return new WalCheckpointer(undefined);
    let worker: Worker;
    try {
      worker = startWorker(script, { workerData: { file, intervalMs: INTERVAL_MS, failuresToGiveUp: FAILURES_TO_GIVE_UP } });
    } catch (error) {
      log.warn('the index checkpoints on the main thread: its checkpoint worker did not start', { reason: (error as Error).message });
      return new WalCheckpointer(undefined);
    }
    const checkpointer = new WalCheckpointer(worker);
    writer.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
    writer.pragma(`wal_autocheckpoint = ${WRITER_BACKSTOP_PAGES}`);
    let fellBack = false;
    const fallBack = (reason: string): void => {
      if (fellBack || checkpointer.stopping) return;
      fellBack = true;
      if (writer.open) writer.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
      log.warn('the index checkpoints on the main thread again: its checkpoint worker stopped', { reason });
    };
    worker.on('message', (message: { failed?: string }) => {
      if (message.failed !== undefined) log.warn('a checkpoint of the index failed; the next one tries again', { error: message.failed });
    });
    worker.on('error', (error) => fallBack(error.message));
    worker.once('exit', (code) => {
      checkpointer.exited = true;
      fallBack(`exit code ${code}`);
    });
    // After the listeners: adding a message listener holds the process open again.
    worker.unref();
    return checkpointer;
  }

  /** Ends the worker, before the writer closes (which then checkpoints what is left, as the last connection). */
  async stop(): Promise<void> {
    if (!this.worker || this.stopping) return;
    this.stopping = true;
    if (this.exited) return;
    const worker = this.worker;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    const timer = setTimeout(() => void worker.terminate(), STOP_WAIT_MS);
    await exited;
    clearTimeout(timer);
  }
}
