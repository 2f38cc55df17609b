/**
 * Starts of a kernel over a workspace whose vectors are all embedded (made by
 * `KEEP=<folder> node dist/bench/semantic-indexer.js`), STARTS times, each in a fresh kernel:
 *   - boot: until Kernel.boot resolves (every plugin active), with each plugin's activation time;
 *   - until the saved HNSW index is loaded (and whether it was rebuilt: the target is no rebuild);
 *   - the background comparison of every block with the store: its time, and the event loop's delay
 *     meanwhile (p99 and max, from the end of the boot: opening the store, a migration included, is
 *     before), with the latency of search_fulltext queries made during it;
 * The OS file cache is as the machine left it: warm after the first start. COLD=1 drops it before
 * each start (`sync; echo 3 > /proc/sys/vm/drop_caches`, as root): a start after a reboot, which reads
 * the graph, the notes index, the store and the modules from disk. In a virtual machine that empties
 * only the guest's cache, and the host may still hold the files. COLD=evict (no root) evicts the
 * workspace's files from the page cache instead (the bench's own modules stay loaded). COLD_DISK=<MB/s>:<reads/s> (root, cgroup
 * v1 blkio) moves this process into a cgroup whose reads from the workspace's disk are throttled so,
 * as a disk that caches nothing would read (60:1500 is what this machine's disk did uncached).
 *   - then search_hybrid, search_fulltext and search_semantic end to end: p50/p99 over QUERIES queries.
 *   npm run build && node dist/bench/semantic-start.js <workspace>   (env: STARTS=3 QUERIES=100 COLD=1|evict COLD_DISK=60:1500)
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Kernel } from '../core/kernel.js';
import { createLogger } from '../core/log.js';
import { dropCaches, evictFiles, throttleDisk } from './cold-disk.js';
import { call, load, pct, semanticPlugins, startFakeEmbedder, threeWordQueries, timeSearches } from './semantic-kit.js';

const WORKSPACE = process.argv[2];
const STARTS = Number(process.env.STARTS ?? 3);
const QUERIES = Number(process.env.QUERIES ?? 100);
const COLD = process.env.COLD === '1';
/** COLD=evict: the workspace's files evicted from the page cache before each start (no root needed). */
const EVICT = process.env.COLD === 'evict';
const COLD_DISK = process.env.COLD_DISK;
const STATUS_EVERY_MS = 1_000;
const DEADLINE_MS = Number(process.env.DEADLINE_MS ?? 1_800_000);

const f = (x: number, digits = 1): string => x.toFixed(digits);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Status { comparing: boolean; pending: number; indexed: number; total: number; lastComparison?: { ms: number; changed: number; skipped?: string }; vectorIndex: { state: string; size: number; problem?: string } }

async function timed(kernel: Kernel, target: string, query: string): Promise<number> {
  const t = process.hrtime.bigint();
  await call(kernel, target, { query });
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function start(fakeUrl: string, queries: string[], round: number): Promise<Kernel> {
  if (COLD) dropCaches();
  if (EVICT) console.log(`  the workspace's files evicted from the page cache: ${(evictFiles(WORKSPACE!) / 2 ** 20).toFixed(1)} MiB of them still cached`);
  const t0 = Date.now();
  const activated: string[] = [];
  const logger = createLogger({
    level: 'info',
    sink: { write: (line: string) => { const record = JSON.parse(line) as { message: string; plugin?: string; level: string }; if (record.message === 'plugin activated') activated.push(`${record.plugin} ${Date.now() - t0}`); else if (record.level !== 'info') console.log(`  ${line.trim()}`); } },
  });
  const kernel = await Kernel.boot({ workspace: WORKSPACE!, logger, config: { plugins: semanticPlugins(fakeUrl) } });
  const booted = Date.now() - t0;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // The histogram measures from its first tick: a stall before it (the first status call) would be missed.
  await sleep(15);
  let loaded: number | undefined;
  let status: Status | undefined;
  const during: number[] = [];
  const statusMs: number[] = [];
  const deadline = Date.now() + DEADLINE_MS;
  let lastStatus = 0;
  for (let i = 0; ; i++) {
    // The status counts every row (15-30 ms at 1M, on the loop measured): asked every 100 ms until the
    // index is loaded (the figure wanted), then once a second; each call is timed.
    if (Date.now() - lastStatus >= (loaded === undefined ? 100 : STATUS_EVERY_MS)) {
      const t = Date.now();
      status = await call<Status>(kernel, 'embeddings_status', {});
      lastStatus = Date.now();
      statusMs.push(lastStatus - t);
      if (loaded === undefined && status.vectorIndex.state === 'ready') loaded = Date.now() - t0;
      if (loaded !== undefined && !status.comparing) break;
      if (status.vectorIndex.state === 'failed' || Date.now() > deadline) throw new Error(`start ${round}: the vector index is ${status.vectorIndex.state} after ${Date.now() - t0} ms (${status.vectorIndex.problem ?? 'no problem reported'})`);
    }
    // A user's query while the start's background work runs (full text: it needs neither the vectors nor the HNSW index).
    during.push(await timed(kernel, 'search_fulltext', queries[i % queries.length]!));
    await sleep(100);
  }
  delay.disable();
  if (!status) throw new Error('no status');
  console.log(`start ${round}: boot ${booted} ms (activated, ms after the start: ${activated.join(', ')})`);
  console.log(`  HNSW index loaded ${loaded} ms after the start (${status.vectorIndex.size} vectors, ${status.vectorIndex.problem ? `rebuilt: ${status.vectorIndex.problem}` : 'no rebuild'}); ${status.indexed} of ${status.total} blocks embedded, ${status.pending} pending`);
  const comparison = status.lastComparison?.skipped ? `skipped (${status.lastComparison.skipped})` : `${status.lastComparison?.ms ?? '?'} ms, ${status.lastComparison?.changed ?? '?'} rows changed`;
  console.log(`  comparison of every block with the store: ${comparison}; event loop delay meanwhile p99 ${f(delay.percentile(99) / 1e6)} ms, max ${f(delay.max / 1e6)} ms (the bench's own status calls took p50 ${f(pct(statusMs, 50))} ms, max ${f(Math.max(...statusMs))} ms); search_fulltext during it p50 ${f(pct(during, 50))} ms, max ${f(Math.max(...during, 0))} ms (${during.length} queries); load ${load()}`);
  return kernel;
}

async function main(): Promise<void> {
  if (!WORKSPACE) throw new Error('usage: node dist/bench/semantic-start.js <workspace made with semantic-indexer KEEP=>');
  console.log(`semantic start bench: ${WORKSPACE}, STARTS=${STARTS}${COLD ? ', caches dropped before each start' : EVICT ? ', the workspace evicted from the page cache before each start' : ''}; load before: ${load()}`);
  if (COLD_DISK) throttleDisk(COLD_DISK, WORKSPACE);
  const fake = await startFakeEmbedder();
  try {
    let queries = ['note'];
    for (let round = 1; round <= STARTS; round++) {
      const kernel = await start(fake.url, queries, round);
      if (round === 1) {
        const found = await call<{ rows: unknown[][] }>(kernel, 'sql_query', { sql: "SELECT content FROM blocks WHERE type = 'paragraph' ORDER BY rowid LIMIT 1000", limit: 1000 });
        const texts = found.rows.map((row) => String(row[0]));
        queries = threeWordQueries(texts, QUERIES);
      }
      if (round === STARTS) await timeSearches(kernel, queries, '');
      await kernel.close();
    }
  } finally {
    fake.child.kill();
  }
  console.log(`load after: ${load()}`);
}

await main();
