import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerExecArgv, type Logger } from '../../core/index.js';
import type { Db } from './index-schema.js';

/** SQLite's own: the committing connection checkpoints once the log holds this many pages. */
const WRITER_AUTOCHECKPOINT = 1000;
const INTERVAL_MS = 500;
/** How long stop() waits for the worker's last checkpoint before ending it. */
const STOP_WAIT_MS = 5_000;

/**
 * Checkpoints of the index off the event loop. SQLite checkpoints inside the commit that takes the
 * write-ahead log past 1,000 pages, on the connection that made it: it copies the pages into the
 * database file and syncs it there, on the thread that answers every request. Under 50 concurrent
 * writers that was a commit of 10 to 17 ms every few dozen commits, every request waiting, and longer
 * when the disk stalls. Here the writer never checkpoints: a worker with a connection of its own runs a
 * passive checkpoint every INTERVAL_MS, which waits for no one. If the worker cannot start, fails or
 * ends, the writer checkpoints again as SQLite does by default.
 */
export class WalCheckpointer {
  private stopping = false;
  private exited = false;

  private constructor(private readonly worker: Worker | undefined) {}

  static start(writer: Db, file: string, log: Logger): WalCheckpointer {
    const script = workerScript();
    // The sources under a test runner, without a build: the writer keeps checkpointing itself.
    if (!script) return new WalCheckpointer(undefined);
    const worker = new Worker(script, { workerData: { file, intervalMs: INTERVAL_MS }, execArgv: workerExecArgv(process.execArgv) });
    worker.unref();
    const checkpointer = new WalCheckpointer(worker);
    worker.once('exit', () => { checkpointer.exited = true; });
    writer.pragma('wal_autocheckpoint = 0');
    let fellBack = false;
    const fallBack = (reason: string): void => {
      if (fellBack || checkpointer.stopping) return;
      fellBack = true;
      if (writer.open) writer.pragma(`wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT}`);
      log.warn('the index checkpoints on the main thread again: its checkpoint worker stopped', { reason });
    };
    worker.on('message', (message: { failed?: string }) => {
      if (message.failed !== undefined) log.warn('a checkpoint of the index failed; the next one tries again', { error: message.failed });
    });
    worker.on('error', (error) => fallBack(error.message));
    worker.on('exit', (code) => fallBack(`exit code ${code}`));
    return checkpointer;
  }

  /** Whether checkpoints run on the worker (false: the writer's own, as SQLite's default). */
  get running(): boolean {
    return this.worker !== undefined && !this.stopping;
  }

  /** Ends the worker, before the writer closes (which then checkpoints what is left, as the last connection). */
  async stop(): Promise<void> {
    if (!this.worker || this.stopping) return;
    this.stopping = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker!.once('exit', () => resolve()));
    this.worker.postMessage('stop');
    const timer = setTimeout(() => void this.worker!.terminate(), STOP_WAIT_MS);
    await exited;
    clearTimeout(timer);
  }
}

/** The compiled worker: beside this module when running from dist/, in dist/ when running from the sources. */
function workerScript(): URL | undefined {
  for (const candidate of ['./wal-checkpoint-worker.js', '../../dist/plugins/blocks/wal-checkpoint-worker.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}
