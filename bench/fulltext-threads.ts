/**
 * Full-text queries on the main thread (search-fulltext `queryWorkers: 0`, as before) against query
 * workers (the default), over an existing workspace (e.g. the 1M-block one of semantic-indexer KEEP=),
 * in fresh kernels, alternating which goes first each round. For each: QUERIES three-word queries one
 * after the other, then the same spread over CLIENTS concurrent callers; their latency (in process, from
 * the call to the answer), the queries per second, and how long the event loop was held at once at worst
 * (a 10 ms interval timer's longest gap: every other request of the kernel waits that long). Semantic
 * search is off, so that only full-text queries read the index.
 * COLD=1 empties the OS file cache before each kernel starts; COLD_DISK=<MB/s>:<reads/s> throttles the
 * disk's reads as an uncached disk would read (root; bench/cold-disk.ts). Without COLD, each kernel runs
 * its queries once unmeasured first, so that both ways are measured with what they read cached.
 *   node dist/bench/fulltext-threads.js <workspace>   (env: QUERIES=100 CLIENTS=4 ROUNDS=2 COLD=1 COLD_DISK=60:1500 ONLY=workers|main)
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { dropCaches, throttleDisk } from './cold-disk.js';
import { call, load, pct, threeWordQueries } from './semantic-kit.js';

const WORKSPACE = process.argv[2];
const QUERIES = Number(process.env.QUERIES ?? 100);
const CLIENTS = Number(process.env.CLIENTS ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const COLD = process.env.COLD === '1';
const COLD_DISK = process.env.COLD_DISK;

const BOTH = [['main thread', 0], ['workers', undefined]] as const;
/** ONLY=workers or ONLY=main: one way alone (for a profile). */
const MODES = BOTH.filter(([mode]) => process.env.ONLY === undefined || mode.startsWith(process.env.ONLY));

interface Pass { times: number[]; ms: number; longestTurnMs: number }

/** Runs `work` with a 10 ms timer noting the longest gap between its callbacks. */
async function watched(work: () => Promise<number[]>): Promise<Pass> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  try {
    const times = await work();
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { times, ms, longestTurnMs: longest };
  } finally {
    clearInterval(timer);
  }
}

/**
 * One query's time; then a turn of the event loop, as between two requests over HTTP: called one after
 * the other in process, the calls of the main-thread way would chain through promises alone, and the
 * timer would see the whole pass as one turn.
 */
async function timedQuery(kernel: Kernel, query: string): Promise<number> {
  const started = performance.now();
  await call(kernel, 'search_fulltext', { query });
  const ms = performance.now() - started;
  await new Promise((resolve) => setImmediate(resolve));
  return ms;
}

function line(name: string, pass: Pass): string {
  const { times, ms, longestTurnMs } = pass;
  return `${name}: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, max ${Math.max(...times).toFixed(0)} ms; `
    + `${(times.length / (ms / 1000)).toFixed(1)} queries/s; event loop held at most ${longestTurnMs.toFixed(0)} ms at once`;
}

async function measure(mode: string, queryWorkers: number | undefined, queries: readonly string[]): Promise<void> {
  if (COLD) dropCaches();
  const started = performance.now();
  const kernel = await Kernel.boot({
    workspace: WORKSPACE!,
    logger: silentLogger,
    config: { plugins: { 'search-semantic': { enabled: false }, blocks: { config: { watch: false } }, 'search-fulltext': { config: queryWorkers === undefined ? {} : { queryWorkers } } } },
  });
  const bootMs = performance.now() - started;
  try {
    // Warm: both modes measured with what the queries read already cached (a pass unmeasured first).
    if (!COLD) for (const query of [...queries, ...queries.map((q) => q.split(' ').reverse().join(' '))]) await timedQuery(kernel, query);
    const sequential = await watched(async () => {
      const times: number[] = [];
      for (const query of queries) times.push(await timedQuery(kernel, query));
      return times;
    });
    // Other queries than the sequential pass's, so that a warm cache is not this pass's only advantage.
    const others = queries.map((query) => query.split(' ').reverse().join(' '));
    const concurrent = await watched(async () => {
      const times: number[] = [];
      await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
        for (let i = client; i < others.length; i += CLIENTS) times.push(await timedQuery(kernel, others[i]!));
      }));
      return times;
    });
    console.log(`  ${mode} (boot ${bootMs.toFixed(0)} ms)`);
    console.log(`    ${line(`${queries.length} one after the other`, sequential)}`);
    console.log(`    ${line(`${others.length} from ${CLIENTS} callers at once`, concurrent)}`);
  } finally {
    await kernel.close();
  }
}

async function main(): Promise<void> {
  if (!WORKSPACE) throw new Error('usage: node dist/bench/fulltext-threads.js <workspace>');
  // The queries come from the index itself, read before any kernel (and before the caches are dropped).
  const index = new Database(join(WORKSPACE, 'index', 'quire.db'), { readonly: true, fileMustExist: true });
  const texts = (index.prepare("SELECT content FROM blocks WHERE type = 'paragraph' ORDER BY rowid LIMIT 2000").pluck().all() as string[]);
  const blocks = index.prepare('SELECT max(rowid) FROM blocks').pluck().get() as number;
  index.close();
  console.log(`full-text threads bench: ${WORKSPACE} (about ${blocks} blocks), ${QUERIES} queries, ${CLIENTS} concurrent callers, ${ROUNDS} rounds${COLD ? ', caches dropped before each kernel' : ''}; load before: ${load()}`);
  if (COLD_DISK) throttleDisk(COLD_DISK, WORKSPACE);
  for (let round = 1; round <= ROUNDS; round++) {
    // Each round its own queries: a round after the first would otherwise find every page it needs cached.
    const queries = threeWordQueries(texts.slice((round - 1) * 100), QUERIES);
    console.log(`round ${round} of ${ROUNDS}, load ${load()}`);
    const order = round % 2 === 1 ? MODES : [...MODES].reverse();
    for (const [mode, queryWorkers] of order) await measure(mode, queryWorkers, queries);
  }
  console.log(`load after: ${load()}`);
}

await main();
