/**
 * Full-text figures (issue 4): over a synthetic corpus of about 1,000,000 blocks of about 60 words
 * (Zipf-distributed vocabulary, two notebooks), the import and rebuild times with the FTS table, the
 * p50/p99 of one- and two-word queries with and without a notebook filter, and the database size.
 *
 *   node dist/bench/fulltext-search.js                 # 10,000 documents x 100 blocks
 *   BENCH_DOCS=1000 node dist/bench/fulltext-search.js
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { Principal } from '../core/plugin-api.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 10_000);
const BLOCKS_PER_DOC = 100;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const VOCABULARY = 30_000;
const person: Principal = { kind: 'person', name: 'bench', role: 'admin' };

/** A deterministic generator, so that two runs search the same corpus. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    state ^= state >>> 13;
    return (state >>> 0) / 4294967296;
  };
}

const words = Array.from({ length: VOCABULARY }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}x`);
/** Cumulative Zipf weights (s = 1) for sampling word ranks. */
const cumulative = (() => {
  const out = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let i = 0; i < VOCABULARY; i++) out[i] = sum += 1 / (i + 1);
  for (let i = 0; i < VOCABULARY; i++) out[i]! /= sum;
  return out;
})();

function zipfWord(next: () => number): string {
  const target = next();
  let low = 0;
  let high = VOCABULARY - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cumulative[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return words[low]!;
}

/** Two words that occur in one block of the corpus, collected while it is written. */
const sameBlockPairs: string[] = [];

async function writeCorpus(folder: string): Promise<void> {
  const next = random(42);
  const every = Math.max(1, Math.floor((DOCS * (BLOCKS_PER_DOC - 1)) / QUERIES));
  let paragraphCount = 0;
  for (let d = 0; d < DOCS; d++) {
    const sub = join(folder, d < DOCS / 2 ? 'first' : 'second', `g${Math.floor(d / 100)}`);
    if (d % 100 === 0) await mkdir(sub, { recursive: true });
    const paragraphs = Array.from({ length: BLOCKS_PER_DOC - 1 }, () => {
      const paragraph = Array.from({ length: 60 }, () => zipfWord(next));
      if (paragraphCount++ % every === 0 && sameBlockPairs.length < QUERIES) sameBlockPairs.push(`${paragraph[5]} ${paragraph[40]}`);
      return paragraph.join(' ');
    });
    await writeFile(join(sub, `doc-${d}.md`), `${paragraphs.join('\n\n')}\n`);
  }
}

async function call(kernel: Kernel, target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const outcome = await kernel.pipeline.call({ target, input, principal: person });
  if (outcome.status !== 'ok') throw new Error('unexpected confirmation');
  return outcome.value as Record<string, unknown>;
}

async function timeQueries(kernel: Kernel, label: string, queries: string[], filter: Record<string, unknown>): Promise<void> {
  const times: number[] = [];
  let hits = 0;
  for (const query of queries) {
    const started = process.hrtime.bigint();
    const found = await call(kernel, 'search_fulltext', { query, ...filter });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    hits += Number(found.total);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!.toFixed(2);
  console.log(`  ${label.padEnd(44)} p50 ${at(0.5).padStart(7)} ms   p99 ${at(0.99).padStart(8)} ms   mean hits ${Math.round(hits / queries.length)}`);
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-fts-'));
  const corpus = join(root, 'corpus');
  console.log(`writing ${DOCS} documents of ${BLOCKS_PER_DOC} blocks (about 60 words each)…`);
  await writeCorpus(corpus);
  const config = { actions: { timeoutMs: 3_600_000 }, pluginHost: { activationTimeoutMs: 600_000 }, plugins: { blocks: { config: { watch: false, welcome: false } } } };
  const kernel = await Kernel.boot({ workspace: join(root, 'ws'), config, logger: silentLogger });
  try {
    const notebooks: string[] = [];
    let started = Date.now();
    let blocks = 0;
    for (const half of ['first', 'second']) {
      const notebook = await call(kernel, 'notebook_create', { name: half });
      notebooks.push(String(notebook.id));
      blocks += Number((await call(kernel, 'import_markdown', { notebook: notebook.id, path: join(corpus, half) })).blocks);
    }
    console.log(`import with the FTS table: ${blocks} blocks in ${((Date.now() - started) / 1000).toFixed(1)} s = ${Math.round(blocks / ((Date.now() - started) / 1000))} blocks/s`);
    started = Date.now();
    await call(kernel, 'index_rebuild', {});
    console.log(`index rebuild with the FTS table: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const db = new Database(join(kernel.workspace.indexDir, 'quire.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    const ftsPages = db.prepare("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'blocks_fts%'").pluck().get() as number | null;
    db.close();
    let bytes = 0;
    for (const name of await readdir(kernel.workspace.indexDir)) bytes += (await stat(join(kernel.workspace.indexDir, name))).size;
    console.log(`database: ${(bytes / 2 ** 20).toFixed(0)} MiB in all, of which the FTS table ${ftsPages === null ? '?' : (ftsPages / 2 ** 20).toFixed(0)} MiB`);
    const next = random(7);
    const uniform = () => words[Math.floor(next() * VOCABULARY)]!;
    const one = Array.from({ length: QUERIES }, uniform);
    const two = Array.from({ length: QUERIES }, () => `${uniform()} ${uniform()}`);
    const twoCommon = Array.from({ length: QUERIES }, () => `${words[Math.floor(next() * 200)]!} ${uniform()}`);
    console.log(`queries (${QUERIES} each, words drawn uniformly from the ${VOCABULARY}-word vocabulary):`);
    await timeQueries(kernel, 'one word', one, {});
    await timeQueries(kernel, 'one word, notebook filter', one, { notebooks: [notebooks[0]] });
    await timeQueries(kernel, 'two words', two, {});
    await timeQueries(kernel, 'two words, notebook filter', two, { notebooks: [notebooks[0]] });
    await timeQueries(kernel, 'a top-200 word and another', twoCommon, {});
    await timeQueries(kernel, 'two words found in one block (Zipf-weighted)', sameBlockPairs, {});
    await timeQueries(kernel, 'the same, notebook filter', sameBlockPairs, { notebooks: [notebooks[0]] });
    await timeQueries(kernel, 'the most common word (worst case)', Array.from({ length: 20 }, () => words[0]!), {});
    await timeQueries(kernel, 'the most common word, notebook filter', Array.from({ length: 20 }, () => words[0]!), { notebooks: [notebooks[0]] });
  } finally {
    await kernel.close();
    if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

await main();
