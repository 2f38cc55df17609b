import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { serveBuiltKernel } from '../../helpers/built-kernel.js';
import { useHarness } from '../../helpers/harness.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';
import { measured } from '../../helpers/loop-gap.js';

/**
 * The built kernel, loaded in this process (helpers/built-kernel.ts: the query worker is compiled, and
 * only here can the event loop's stalls be measured), searched over HTTP while its index cannot be read:
 * another process holds the write-ahead log's five read-mark locks (bytes 123 to 127 of quire.db-shm),
 * so every SQLite read of the index waits, retrying, as a query does on a disk that does not answer (a
 * cold disk took 15 to 24 s for one query at a million blocks).
 */
/**
 * A generous bound on one turn of the event loop while the kernel works: far from any real turn, far
 * below a stall (200 ms could be passed by a loaded 2-core machine's scheduling and a major GC alone).
 */
const STALL_MS = 500;
const PYTHON = spawnSync('python3', ['-c', 'import fcntl'], { stdio: 'ignore' }).status === 0;

interface Created { id: string }
interface Found { total: number; results: { id: string }[] }

/**
 * Holds the read-mark locks of `shm` from another process (fcntl locks are per process) until `release`,
 * or for `holdMs` when given: that process lets go by itself, whatever this one's event loop does.
 */
async function lockReaders(shm: string, holdMs?: number): Promise<{ release(): Promise<void> }> {
  // Node has no fcntl: python3 holds the locks (.ci/run installs it where it is missing).
  if (!PYTHON) throw new Error('these tests need python3 (apt-get install -y python3) to hold SQLite\'s locks from another process');
  const child: ChildProcessWithoutNullStreams = spawn('python3', ['-c', `
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX, 5, 123)
print('locked', flush=True)
time.sleep(float(sys.argv[2])) if len(sys.argv) > 2 else sys.stdin.read()
`, shm, ...(holdMs === undefined ? [] : [String(holdMs / 1000)])]);
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder ended (${code})`)));
  });
  return {
    async release() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await exited;
    },
  };
}

describe('full-text queries off the main thread (the built kernel over HTTP)', () => {
  const { tempDir } = useHarness();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => { for (const close of closers.splice(0).reverse()) await close(); });

  async function serve(config: KernelConfigFile, fulltext: Record<string, unknown> = {}) {
    const { kernel, url, call } = await serveBuiltKernel(join(await tempDir(), 'workspace'), {
      ...config,
      // Nothing else reads the index meanwhile: the semantic indexer would, on the main thread.
      plugins: { 'search-fulltext': { config: fulltext }, 'search-semantic': { enabled: false } },
    }, closers);
    const notebook = (await call('blocks/notebook/create', { name: 'N' })).json().result as Created;
    await call('blocks/document/create', { notebook: notebook.id, title: 'D', markdown: 'the quiet lighthouse keeper\n\nanother paragraph' });
    const search = (query: string): Promise<RawResponse> => call('search-fulltext/search/fulltext', { query });
    // The first search starts the query worker, which opens its connection.
    expect(((await search('lighthouse')).json().result as Found).total).toBe(1);
    return { url, search, shm: join(kernel.workspace.indexDir, 'quire.db-shm') };
  }

  it('answers /healthz while a query waits on the index, stops the query at its time limit with 504, and searches again once the index reads', async () => {
    // The limit also covers starting a query worker (the first search, and the one after the release):
    // room for that on a loaded machine.
    const { url, search, shm } = await serve({ actions: { timeoutMs: 3_000 } });
    const lock = await lockReaders(shm);
    let released = false;
    try {
      const { value: [stopped, health], maxDelayMs } = await measured(() => Promise.all([
        search('keeper'),
        new Promise<RawResponse>((resolve) => setTimeout(() => resolve(rawRequest(`${url}/healthz`)), 300)),
      ]));
      expect(stopped.status).toBe(504);
      expect(stopped.json().error?.code).toBe('ACTION_TIMEOUT');
      expect(health.status).toBe(200);
      expect(maxDelayMs).toBeLessThan(STALL_MS);
      await lock.release();
      released = true;
      // A new worker took the place of the one ended at the time limit.
      const found = await search('keeper');
      expect(found.status).toBe(200);
      expect((found.json().result as Found).results).toHaveLength(1);
    } finally {
      if (!released) await lock.release();
    }
  });

  it('(the same query on the main thread, queryWorkers 0, holds the event loop until the index reads)', async () => {
    const { url, search, shm } = await serve({ actions: { timeoutMs: 1_000 } }, { queryWorkers: 0 });
    const lock = await lockReaders(shm, 3_000);
    const { value: [answered, health], maxDelayMs } = await measured(() => Promise.all([
      search('keeper'),
      new Promise<RawResponse>((resolve) => setTimeout(() => resolve(rawRequest(`${url}/healthz`)), 300)),
    ]));
    // Not at its time limit: the thread that would have answered it was the one waiting.
    expect([200, 504]).toContain(answered.status);
    expect(health.status).toBe(200);
    expect(maxDelayMs).toBeGreaterThan(STALL_MS);
    await lock.release();
  });
});
