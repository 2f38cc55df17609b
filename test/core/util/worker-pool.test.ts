import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../core/util/worker-pool.js';
import { useHarness } from '../../helpers/harness.js';

/**
 * A job that blocks inside native code, as a SQLite statement does: reading a FIFO that nobody writes
 * yet. Ending the worker cannot interrupt it; the thread ends once the read returns.
 */
const BLOCKING = `
import { parentPort, threadId } from 'node:worker_threads';
import { readFileSync, writeFileSync } from 'node:fs';
parentPort.on('message', (job) => {
  if (job.sleepMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, job.sleepMs);
  // Says it is about to read, for the test to wait on (a fixed 100 ms was not always enough under load).
  if (job.fifo) writeFileSync(job.fifo + '.reading', '');
  const text = job.fifo ? readFileSync(job.fifo, 'utf8') : 'quick';
  parentPort.postMessage({ id: job.id, text, thread: threadId });
});
`;

interface Job { fifo?: string; sleepMs?: number }
interface Reply { id: number; text: string; thread: number }

/** Waits until the worker is at its read of `fifo` (at most 20 s). */
const reading = async (fifo: string): Promise<void> => {
  for (let waited = 0; !existsSync(`${fifo}.reading`) && waited < 20_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
};

/** Writes to a FIFO without blocking when nobody reads it (read-write open never waits on Linux). */
const release = async (fifo: string, text: string): Promise<void> => {
  const handle = await open(fifo, 'r+');
  try {
    await handle.write(text);
  } finally {
    await handle.close();
  }
};

const settledYet = async (promise: Promise<unknown>): Promise<boolean> => {
  let settled = false;
  promise.then(() => { settled = true; }, () => { settled = true; });
  await new Promise((resolve) => setTimeout(resolve, 300));
  return settled;
};

describe('worker pool', () => {
  const { tempDir } = useHarness();

  it('answers a job whose caller gives up at once, and counts its stuck thread until it ends: no new thread past the bound', async () => {
    const folder = await tempDir('quire-pool-');
    const script = join(folder, 'blocking-worker.mjs');
    await writeFile(script, BLOCKING);
    const fifo = join(folder, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const pool = new WorkerPool<Job, Reply>(pathToFileURL(script), 1, { name: 'the test worker', ending: 1 });
    try {
      expect((await pool.run({})).text).toBe('quick');
      const caller = new AbortController();
      const stuck = pool.run({ fifo }, caller.signal);
      await reading(fifo);
      caller.abort(new Error('time limit'));
      await expect(stuck).rejects.toThrow('time limit');
      // The ended thread is still inside its read: the next job waits rather than start a second thread.
      const next = pool.run({});
      expect(await settledYet(next)).toBe(false);
      // The read returns, the ended thread exits, and the next job gets a new one.
      await release(fifo, 'released');
      expect((await next).text).toBe('quick');
    } finally {
      await pool.close();
    }
  });

  it('drops a queued job whose caller gives up before it starts, leaving the running one alone', async () => {
    const folder = await tempDir('quire-pool-');
    const script = join(folder, 'blocking-worker.mjs');
    await writeFile(script, BLOCKING);
    const fifo = join(folder, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const pool = new WorkerPool<Job, Reply>(pathToFileURL(script), 1, { name: 'the test worker' });
    try {
      const running = pool.run({ fifo });
      const caller = new AbortController();
      const queued = pool.run({}, caller.signal);
      caller.abort(new Error('cancelled'));
      await expect(queued).rejects.toThrow('cancelled');
      await writeFile(fifo, 'first');
      expect((await running).text).toBe('first');
    } finally {
      await pool.close();
    }
  });

  it('keeps a worker whose given-up job answers within the grace period, and ends one that does not', async () => {
    const folder = await tempDir('quire-pool-');
    const script = join(folder, 'blocking-worker.mjs');
    await writeFile(script, BLOCKING);
    const fifo = join(folder, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const pool = new WorkerPool<Job, Reply>(pathToFileURL(script), 1, { name: 'the test worker', graceMs: 1_000 });
    try {
      const first = (await pool.run({})).thread;
      const typed = new AbortController();
      const slow = pool.run({ sleepMs: 200 }, typed.signal);
      typed.abort(new Error('cancelled'));
      await expect(slow).rejects.toThrow('cancelled');
      // Answered within the grace period: the same thread takes the next job.
      expect((await pool.run({})).thread).toBe(first);
      const stuck = new AbortController();
      const blocked = pool.run({ fifo }, stuck.signal);
      await reading(fifo);
      stuck.abort(new Error('time limit'));
      await expect(blocked).rejects.toThrow('time limit');
      // Past the grace period it is ended; it exits once its read returns, and a new thread follows.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const next = pool.run({});
      await release(fifo, 'released');
      expect((await next).thread).not.toBe(first);
    } finally {
      await pool.close();
    }
  });
});
