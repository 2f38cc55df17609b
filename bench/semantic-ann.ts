/**
 * ANN figures of issue 15 (closing note): a usearch HNSW index (plugins/search-semantic/ann) over N
 * synthetic 384-d embedding-like vectors (bench/semantic-vectors.ts): build time and RSS, save and load
 * (load = the start-up cost) with the longest stall of this thread's event loop meanwhile, unfiltered
 * p50/p99 and recall@10 against the exact answer, with a JavaScript scan and usearch's exactSearch
 * timed query by query in the same loop (ratios), an ef sweep, filtered search at 1% and 30% of keys,
 * and the incremental upsert of one vector. The built index and the vectors are cached in CACHE_DIR.
 *
 *   node dist/bench/semantic-ann.js [N=1000000] [CACHE_DIR=/tmp/quire-semantic-ann]
 *   env: BENCH_QUERIES (200), BENCH_SCAN_QUERIES (20), ANN_EF (search ef), ANN_EF_LIST (64,128,256: a sweep),
 *   ANN_M, ANN_EF_ADD, ANN_Q (build parameters: another cached index), QUERY_OFF_TOPIC (0: queries as the notes are)
 */
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { blobInto } from '../plugins/search-semantic/vector-blob.js';
import { exactSearch, MetricKind, type Matches } from '../plugins/search-semantic/ann/usearch-module.js';
import { openAnnIndex, exactTopK, type AnnHit, type AnnIndex, type AnnOptions, type AnnQuantization } from '../plugins/search-semantic/ann/ann-index.js';
import { ANN_DEFAULTS } from '../plugins/search-semantic/ann/ann-client.js';
import { corpusVectors, queryVectors } from './semantic-vectors.js';

const N = Number(process.argv[2] ?? 1_000_000);
const CACHE = process.argv[3] ?? join(tmpdir(), 'quire-semantic-ann');
const D = 384;
const K = 10;
const SEED = 15;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const SCAN_QUERIES = Number(process.env.BENCH_SCAN_QUERIES ?? 20);
const EF_LIST = (process.env.ANN_EF_LIST ?? '64,128,256').split(',').map(Number);
/** QUERY_OFF_TOPIC: queries less like the notes (bench/semantic-vectors.ts queryVectors); 0 by default. */
const OFF_TOPIC = Number(process.env.QUERY_OFF_TOPIC ?? 0);
const BATCH = 10_000;
const options: AnnOptions = {
  dimensions: D,
  quantization: (process.env.ANN_Q ?? ANN_DEFAULTS.quantization) as AnnQuantization,
  connectivity: Number(process.env.ANN_M ?? ANN_DEFAULTS.connectivity),
  expansionAdd: Number(process.env.ANN_EF_ADD ?? ANN_DEFAULTS.expansionAdd),
  expansionSearch: Number(process.env.ANN_EF ?? ANN_DEFAULTS.expansionSearch),
};
const indexDir = join(CACHE, `index-${N}-M${options.connectivity}-efa${options.expansionAdd}-${options.quantization}-s${SEED}`);

const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(0));
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const summary = (values: number[]): string => `p50 ${ms(percentile(values, 50))} ms, p99 ${ms(percentile(values, 99))} ms`;

/** Runs `work` while timing the longest gap between 5 ms ticks of this thread's event loop. */
async function withLoopStall<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; stallMs: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  const began = performance.now();
  const value = await work();
  const elapsed = performance.now() - began;
  clearInterval(timer);
  stall = Math.max(stall, performance.now() - last);
  return { value, ms: elapsed, stallMs: stall };
}

function row(vectors: Float32Array, i: number): Float32Array {
  return vectors.subarray(i * D, (i + 1) * D);
}

function recall(found: readonly AnnHit[], truth: readonly number[]): number {
  const expected = new Set(truth);
  return truth.length === 0 ? 1 : found.filter((hit) => expected.has(hit.key)).length / truth.length;
}

/** SiYuan's method: a dot product with every vector (they are normalised), keeping the best k. */
function javascriptScan(vectors: Float32Array, query: Float32Array, k: number): number[] {
  const bestKeys: number[] = [];
  const bestScores: number[] = [];
  for (let i = 0, offset = 0; i < N; i++, offset += D) {
    let dot = 0;
    for (let j = 0; j < D; j++) dot += vectors[offset + j]! * query[j]!;
    if (bestScores.length < k || dot > bestScores[bestScores.length - 1]!) {
      let at = bestScores.length;
      while (at > 0 && bestScores[at - 1]! < dot) at--;
      bestScores.splice(at, 0, dot);
      bestKeys.splice(at, 0, i);
      if (bestScores.length > k) { bestScores.pop(); bestKeys.pop(); }
    }
  }
  return bestKeys;
}

function usearchExact(vectors: Float32Array, query: Float32Array): number[] {
  const found = exactSearch(vectors, Float32Array.from(query), D, K, MetricKind.Cos, 0) as Matches;
  return Array.from(found.keys, Number);
}

async function buildOrLoad(vectors: Float32Array): Promise<void> {
  const opened = await withLoopStall(() => openAnnIndex(indexDir, 'bench', options));
  let index = opened.value;
  if (!index.needsRebuild && index.size() === N) {
    console.log(`cached index in ${indexDir} (${index.size()} vectors)`);
    await index.close();
    return;
  }
  console.log(`building: ${index.needsRebuild} — ${N} vectors in batches of ${BATCH}, both cores (load ${load()})`);
  const rssBefore = process.memoryUsage().rss;
  const began = performance.now();
  for (let start = 0; start < N; start += BATCH) {
    const keys = Array.from({ length: Math.min(BATCH, N - start) }, (_, i) => start + i);
    await index.upsert(keys, keys.map((key) => row(vectors, key)));
    const batchNumber = start / BATCH + 1;
    if (batchNumber % Math.max(1, Math.round(N / BATCH / 10)) === 0 || start + BATCH >= N) {
      console.log(`  ${start + BATCH} in ${((performance.now() - began) / 1000).toFixed(0)} s (load ${load()})`);
    }
  }
  const buildMs = performance.now() - began;
  const rss = process.memoryUsage().rss;
  console.log(`BUILD ${N} vectors: ${(buildMs / 1000).toFixed(1)} s (${((buildMs / N) * 1000).toFixed(0)} µs per vector), RSS ${mb(rss)} (+${mb(rss - rssBefore)} over the vectors), load ${load()}`);
  const saved = await withLoopStall(() => index.save(N));
  const file = readdirSync(indexDir).find((name) => name.endsWith('.usearch'))!;
  console.log(`SAVE ${(saved.ms / 1000).toFixed(2)} s (file ${mb(statSync(join(indexDir, file)).size)}, fsync included), longest event-loop stall of the main thread meanwhile ${ms(saved.stallMs)} ms`);
  await index.close();
  index = undefined as unknown as AnnIndex;
}

async function main(): Promise<void> {
  console.log(`semantic-ann: N=${N}, ${D}-d, k=${K}, ${QUERIES} queries (off topic ${OFF_TOPIC}), options ${JSON.stringify(options)}; ${cpus().length} cores, uptime load ${load()}`);
  const generated = await withLoopStall(async () => corpusVectors(CACHE, N, D, SEED));
  const vectors = generated.value.vectors;
  console.log(`vectors ${generated.value.cached ? 'read from cache' : 'generated'} in ${(generated.ms / 1000).toFixed(1)} s, RSS ${mb(process.memoryUsage().rss)}`);
  const queries = queryVectors(QUERIES, D, SEED, SEED + 102, OFF_TOPIC);
  await buildOrLoad(vectors);

  const rssBefore = process.memoryUsage().rss;
  const opened = await withLoopStall(() => openAnnIndex(indexDir, 'bench', options));
  const index = opened.value;
  if (index.needsRebuild) throw new Error(`the saved index did not load: ${index.needsRebuild}`);
  console.log(`LOAD (start-up) ${ms(opened.ms)} ms for ${index.size()} vectors (worker start included), RSS +${mb(process.memoryUsage().rss - rssBefore)}, longest main-thread stall ${ms(opened.stallMs)} ms, load ${load()}`);

  await unfiltered(index, vectors, queries);
  await sweep(vectors, queries);
  for (const share of [0.01, 0.05, 0.1, 0.3]) await filtered(index, vectors, queries, share);
  await upserts(index, vectors);
  await threadComparison(index);
  await index.close();
  console.log(`done, load ${load()}`);
}

/** Exact answers of the queries (usearch exactSearch over the float32 corpus). */
const truthCache: number[][] = [];

async function unfiltered(index: AnnIndex, vectors: Float32Array, queries: Float32Array): Promise<void> {
  const ann: number[] = [];
  const exact: number[] = [];
  const scan: number[] = [];
  const recalls: number[] = [];
  let scanAgrees = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = row(queries, q);
    let began = performance.now();
    const hits = await index.search(query, K);
    ann.push(performance.now() - began);
    began = performance.now();
    const truth = usearchExact(vectors, query);
    exact.push(performance.now() - began);
    truthCache[q] = truth;
    recalls.push(recall(hits, truth));
    if (q < SCAN_QUERIES) {
      began = performance.now();
      const scanned = javascriptScan(vectors, query, K);
      scan.push(performance.now() - began);
      scanAgrees += recall(scanned.map((key) => ({ key, score: 0 })), truth);
    }
  }
  const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
  const annP50 = percentile(ann, 50);
  console.log(`UNFILTERED ANN (ef ${options.expansionSearch}, worker round trip included): ${summary(ann)}, recall@10 ${mean.toFixed(4)} (min ${Math.min(...recalls).toFixed(1)})`);
  console.log(`  usearch exactSearch (both cores): ${summary(exact)} → ANN p50 ${(percentile(exact, 50) / annP50).toFixed(1)}× faster (target ≥ 10×)`);
  console.log(`  JavaScript scan (${SCAN_QUERIES} queries, one core): ${summary(scan)} → ANN p50 ${(percentile(scan, 50) / annP50).toFixed(0)}× faster (target ≥ 50×); scan vs exact recall ${(scanAgrees / SCAN_QUERIES).toFixed(3)}`);
  console.log(`  load ${load()}`);
}

async function sweep(vectors: Float32Array, queries: Float32Array): Promise<void> {
  for (const ef of EF_LIST) {
    const index = await openAnnIndex(indexDir, 'bench', { ...options, expansionSearch: ef });
    const times: number[] = [];
    const recalls: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const began = performance.now();
      const hits = await index.search(row(queries, q), K);
      times.push(performance.now() - began);
      recalls.push(recall(hits, truthCache[q] ?? usearchExact(vectors, row(queries, q))));
    }
    console.log(`  ef ${ef}: ${summary(times)}, recall@10 ${(recalls.reduce((a, b) => a + b, 0) / QUERIES).toFixed(4)}`);
    await index.close();
  }
}

/** A pseudo-random `share` of the keys, the same for every run. */
function allowedBy(share: number): (key: number) => boolean {
  const cut = Math.round(share * 10_000);
  return (key) => (Math.imul(key + 1, 2654435761) >>> 0) % 10_000 < cut;
}

async function filtered(index: AnnIndex, vectors: Float32Array, queries: Float32Array, share: number): Promise<void> {
  const allowed = allowedBy(share);
  const keys: number[] = [];
  for (let key = 0; key < N; key++) if (allowed(key)) keys.push(key);
  const gathered = new Float32Array(keys.length * D);
  keys.forEach((key, i) => gathered.set(row(vectors, key), i * D));
  const annTimes: number[] = [];
  const exactTimes: number[] = [];
  const recalls: number[] = [];
  let fallbacks = 0;
  let outside = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = row(queries, q);
    let began = performance.now();
    const hits = await index.searchAllowed(query, K, allowed, keys.length / N);
    annTimes.push(performance.now() - began);
    began = performance.now();
    const truth = exactTopK(query, keys, gathered, D, K);
    exactTimes.push(performance.now() - began);
    if (hits === null) fallbacks++;
    outside += (hits ?? []).filter((hit) => !allowed(hit.key)).length;
    recalls.push(recall(hits ?? truth, truth.map((hit) => hit.key)));
  }
  const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
  console.log(`FILTERED to ${(share * 100).toFixed(0)}% (${keys.length} keys): searchAllowed ${summary(annTimes)}, recall@10 ${mean.toFixed(4)}, ${fallbacks}/${QUERIES} gave null (exact instead), ${outside} results outside the filter`);
  console.log(`  exactTopK over the ${keys.length} allowed vectors already in memory: ${summary(exactTimes)}; load ${load()}`);
  if (fallbacks > 0) sqliteRead(keys, gathered);
}

/**
 * What the exact path costs before exactTopK: search-semantic reads the allowed keys' vectors from
 * embeddings.db by key, 4,096 at a time (semantic-search.ts, exactAmong). Timed here on a table holding
 * just those rows (the real one holds every block's: its B-tree is deeper, so this is a lower bound).
 */
function sqliteRead(keys: number[], gathered: Float32Array): void {
  const dir = mkdtempSync(join(tmpdir(), 'quire-ann-sqlite-'));
  const db = new Database(join(dir, 'vectors.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE v (key INTEGER PRIMARY KEY, vector BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO v (key, vector) VALUES (?, ?)');
    db.transaction(() => keys.forEach((key, i) => insert.run(key, Buffer.from(gathered.buffer, i * D * 4, D * 4))))();
    const page = db.prepare('SELECT key, vector FROM v WHERE key IN (SELECT value FROM json_each(?))');
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const began = performance.now();
      const matrix = new Float32Array(keys.length * D);
      let filled = 0;
      for (let start = 0; start < keys.length; start += 4_096) {
        for (const row of page.all(JSON.stringify(keys.slice(start, start + 4_096))) as { key: number; vector: Buffer }[]) {
          blobInto(row.vector, matrix, filled * D);
          filled++;
        }
      }
      times.push(performance.now() - began);
    }
    console.log(`  exact path's read of those ${keys.length} vectors from SQLite by key (warm, 5 rounds): ${summary(times)}`);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function upserts(index: AnnIndex, vectors: Float32Array): Promise<void> {
  const fresh: number[] = [];
  const replace: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < 200; i++) {
    let began = performance.now();
    await index.upsert([N + i], [row(vectors, i)]);
    fresh.push(performance.now() - began);
    began = performance.now();
    await index.upsert([i], [row(vectors, i)]);
    replace.push(performance.now() - began);
    began = performance.now();
    await index.has(i);
    roundTrip.push(performance.now() - began);
  }
  await index.remove(Array.from({ length: 200 }, (_, i) => N + i));
  console.log(`UPSERT one vector: new key ${summary(fresh)}, existing key (remove + add) ${summary(replace)} (target p50 < 5 ms); worker round trip alone (has) ${summary(roundTrip)}; load ${load()}`);
}

/**
 * Why the graph lives on a worker: the same load and saves with it on this thread, alternating, with the
 * longest stall of this thread's event loop (a kernel answers nothing else meanwhile).
 */
async function threadComparison(worker: AnnIndex): Promise<void> {
  const opened = await withLoopStall(() => openAnnIndex(indexDir, 'bench', options, 'main'));
  const here = opened.value;
  console.log(`LOAD with the graph on this thread: ${ms(opened.ms)} ms, longest stall ${ms(opened.stallMs)} ms`);
  for (let round = 0; round < 2; round++) {
    const onWorker = await withLoopStall(() => worker.save(N));
    const onThisThread = await withLoopStall(() => here.save(N));
    console.log(`SAVE round ${round + 1}: worker ${ms(onWorker.ms)} ms (longest stall of this thread ${ms(onWorker.stallMs)} ms), this thread ${ms(onThisThread.ms)} ms (stall ${ms(onThisThread.stallMs)} ms); load ${load()}`);
  }
  await here.close();
}

await main();
