/**
 * The index's checkpoints on a thread of their own (see wal-checkpointer.ts): every `intervalMs`, a
 * passive checkpoint copies what the write-ahead log holds into the database file and syncs it. A
 * passive checkpoint never waits for the writer or the readers: it copies what no reader still needs.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

interface Setup {
  file: string;
  intervalMs: number;
  /** Failures in a row after which this worker ends, and the writer checkpoints alone again. */
  failuresToGiveUp: number;
}

const { file, intervalMs, failuresToGiveUp } = workerData as Setup;
const db = new Database(file, { fileMustExist: true });
// As the writer: the checkpoint syncs the database file before the log may be reused.
db.pragma('synchronous = NORMAL');
let failures = 0;

function end(): void {
  clearInterval(timer);
  db.close();
  parentPort?.close();
}

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    failures = 0;
  } catch (error) {
    failures++;
    parentPort?.postMessage({ failed: (error as Error).message });
    if (failures >= failuresToGiveUp) end();
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message === 'stop') end();
});
