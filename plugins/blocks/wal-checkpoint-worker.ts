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
}

const { file, intervalMs } = workerData as Setup;
const db = new Database(file, { fileMustExist: true });
// As the writer: the checkpoint syncs the database file before the log may be reused.
db.pragma('synchronous = NORMAL');
let reported = false;

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    reported = false;
  } catch (error) {
    // Said once per run of failures; the next checkpoint tries again.
    if (!reported) parentPort?.postMessage({ failed: (error as Error).message });
    reported = true;
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
