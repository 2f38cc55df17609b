/**
 * search-semantic's indexer against a loopback OpenAI-compatible /embeddings fake (a child process,
 * trigram vectors of 384 dimensions), on the realistic corpus (../shared/bench/corpus.mjs):
 *   1. initial embedding of BLOCKS blocks: blocks per second (the fake answers in well under 1 ms a text);
 *   2. block update latency, alternating rounds: A = search-semantic on (its indexer re-embeds each
 *      updated block in the background), B = search-semantic disabled; p50/p99 and A/B;
 *   3. the lag from an update's answer to its block's new vector being searchable (A);
 *   4. a restart of A: time to boot, and until the saved HNSW index is loaded (no rebuild, nothing re-embedded);
 *   5. after the restart, search_hybrid (full text and semantic, fused) end to end, beside each arm alone:
 *      p50/p99 over QUERIES queries of three words from the corpus.
 *   npm run build && node dist/bench/semantic-indexer.js   (env: BLOCKS=5000 UPDATES=200 SETTLE_MS=0 QUERIES=100)
 *   UPDATES=0 leaves out B and steps 2 and 3 (for BLOCKS=1000000, where filling B would double the writes).
 *   KEEP=<empty folder> keeps workspace A there afterwards (bench/semantic-start.ts restarts it).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { call, load, pct, semanticPlugins, startFakeEmbedder, threeWordQueries, timeSearches } from './semantic-kit.js';

const BLOCKS = Number(process.env.BLOCKS ?? 5000);
const UPDATES = Number(process.env.UPDATES ?? 200);
const ROUND = 20;
const QUERIES = Number(process.env.QUERIES ?? 100);
/** A pause after each update (both sides): 0 measures writes while the previous one's background work may still run. */
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 0);
/** The status is polled this often while waiting for the embedding (a count of every row each time). */
const POLL_MS = Math.max(50, Math.round(BLOCKS / 500));
/** KEEP=<folder>: workspace A is left there (for bench/semantic-start.ts), not deleted. */
const KEEP = process.env.KEEP;
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHARED = process.env.QUIRE_SHARED_BENCH ?? join(REPO, '..', 'shared', 'bench');

const f = (x: number, digits = 2): string => x.toFixed(digits);

async function corpusParts(count: number): Promise<string[]> {
  const { generate } = await import(pathToFileURL(join(SHARED, 'corpus.mjs')).href) as { generate(out: string, blocks: number, notebooks?: number): unknown };
  const folder = await mkdtemp(join(tmpdir(), 'quire-semantic-corpus-'));
  try {
    generate(folder, count + 200, 1);
    const files = (await readdir(folder, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile() && entry.name.endsWith('.md')).map((entry) => join(entry.parentPath, entry.name)).sort();
    const parts: string[] = [];
    for (const file of files) parts.push(...(await readFile(file, 'utf8')).trim().split('\n\n').filter((part) => !part.startsWith('#')));
    return parts;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function boot(workspace: string, fakeUrl: string, semantic: boolean): Promise<Kernel> {
  return Kernel.boot({
    workspace, logger: silentLogger,
    config: { plugins: semanticPlugins(fakeUrl, semantic) },
  });
}

interface Status { lastComparison?: { ms: number; changed: number }; total: number; indexed: number; pending: number; failed: number; queued: number; comparing: boolean; vectorIndex: { state: string; size: number; problem?: string } }

/** Polls the status every `stepMs` (the status counts every row to do: 100-200 ms at 1M, so polling often would measure itself). */
async function waitEmbedded(kernel: Kernel, predicate: (status: Status) => boolean = () => true, stepMs = POLL_MS): Promise<Status> {
  for (;;) {
    const status = await call<Status>(kernel, 'embeddings_status', {});
    if (!status.comparing && status.queued === 0 && status.pending === 0 && predicate(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

async function fill(kernel: Kernel, parts: string[]): Promise<string[]> {
  const notebook = await call<{ id: string }>(kernel, 'notebook_create', { name: 'Bench' });
  for (let start = 0; start < BLOCKS; start += 500) {
    await call(kernel, 'document_create', { notebook: notebook.id, title: `Doc ${start}`, markdown: parts.slice(start, Math.min(BLOCKS, start + 500)).join('\n\n') });
  }
  const found = await call<{ rows: unknown[][] }>(kernel, 'sql_query', { sql: "SELECT id FROM blocks WHERE type = 'paragraph' ORDER BY id LIMIT 1000", limit: 1000 });
  return found.rows.map((row) => String(row[0]));
}

async function main(): Promise<void> {
  console.log(`semantic indexer bench: BLOCKS=${BLOCKS} UPDATES=${UPDATES}; load before: ${load()}`);
  const parts = await corpusParts(BLOCKS + UPDATES);
  const fake = await startFakeEmbedder();
  const root = await mkdtemp(join(tmpdir(), 'quire-semantic-bench-'));
  try {
    const wsA = KEEP || join(root, 'a');
    const wsB = join(root, 'b');
    let a = await boot(wsA, fake.url, true);
    const b = UPDATES > 0 ? await boot(wsB, fake.url, false) : undefined;
    // 1. Initial embedding.
    const filled = Date.now();
    const idsA = await fill(a, parts);
    const idsB = b ? await fill(b, parts) : [];
    const started = Date.now();
    const first = await waitEmbedded(a, (status) => status.indexed + 0 >= status.total - 50 && status.vectorIndex.state === 'ready');
    const seconds = (Date.now() - started) / 1000;
    console.log(`1. embedded ${first.indexed} of ${first.total} blocks ${f(seconds)} s after the writes (${f(first.indexed / seconds, 0)} blocks/s through the loopback fake; writes took ${f((started - filled) / 1000)} s)`);
    // 2 and 3. Updates, alternating rounds.
    const latency: Record<'A' | 'B', number[]> = { A: [], B: [] };
    const lag: number[] = [];
    let next = BLOCKS;
    for (let done = 0; done < UPDATES; done += ROUND) {
      // The order flips each round: neither side always follows the other.
      for (const side of ((done / ROUND) % 2 === 0 ? ['A', 'B'] : ['B', 'A']) as ('A' | 'B')[]) {
        const kernel = side === 'A' ? a : b!;
        const ids = side === 'A' ? idsA : idsB;
        for (let i = 0; i < ROUND; i++) {
          const id = ids[(done + i) % ids.length]!;
          const text = parts[next++ % parts.length]!;
          const t0 = process.hrtime.bigint();
          await call(kernel, 'block_update', { id, markdown: text });
          const t1 = process.hrtime.bigint();
          latency[side].push(Number(t1 - t0) / 1e6);
          if (side === 'A') {
            await waitEmbedded(a, () => true, 5);
            lag.push(Number(process.hrtime.bigint() - t1) / 1e6);
          }
          // Both sides rest alike between updates, so that background work after one does not overlap the next.
          if (SETTLE_MS > 0) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        }
      }
    }
    if (UPDATES > 0) console.log(`2. block_update p50/p99 ms: A (semantic on) ${f(pct(latency.A, 50))}/${f(pct(latency.A, 99))}, B (off) ${f(pct(latency.B, 50))}/${f(pct(latency.B, 99))}; A/B p50 ${f(pct(latency.A, 50) / pct(latency.B, 50))}, p99 ${f(pct(latency.A, 99) / pct(latency.B, 99))}`);
    if (UPDATES > 0) console.log(`3. update answered -> new vector searchable, p50/p99 ms: ${f(pct(lag, 50))}/${f(pct(lag, 99))} (includes the HTTP call to the fake; status polled in 5 ms steps)`);
    // 4. Restart.
    await a.close();
    const t0 = Date.now();
    a = await boot(wsA, fake.url, true);
    const booted = Date.now() - t0;
    // Short steps until the index is loaded (read from the first status that says so), then POLL_MS until the comparison ends.
    let loadedMs: number | undefined;
    for (;;) {
      const status = await call<Status>(a, 'embeddings_status', {});
      if (status.vectorIndex.state === 'ready') { loadedMs = Date.now() - t0; break; }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ready = await waitEmbedded(a);
    console.log(`4. restart of A: boot ${booted} ms, HNSW index loaded ${loadedMs} ms after the start, the comparison done ${Date.now() - t0} ms after it (${ready.vectorIndex.size} vectors, ${ready.vectorIndex.problem ? `rebuilt: ${ready.vectorIndex.problem}` : 'no rebuild'}); background comparison of every block with the store ${ready.lastComparison?.ms ?? '?'} ms (${ready.lastComparison?.changed ?? '?'} rows changed)`);
    // 5. Queries end to end after the restart, each kind in turn, after a few to warm up.
    await timeSearches(a, threeWordQueries(parts, QUERIES), `5. over ${ready.vectorIndex.size} vectors, `);
    await a.close();
    await b?.close();
  } finally {
    fake.child.kill();
    await rm(root, { recursive: true, force: true });
  }
  console.log(`load after: ${load()}`);
}

await main();
