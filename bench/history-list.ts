/**
 * What listing a document's kept versions costs (`history list`, and `history search` per document), on a
 * realistic document: the corpus's documents (`../shared/bench/corpus.mjs`, 100 blocks of about 400
 * characters) joined into one of BLOCKS blocks, stored as the block store writes it, kept VERSIONS times
 * (each version a little longer). Compares, in the same run and on the same files:
 * - the baseline: every version read whole and parsed, and its text parsed again for the title (the
 *   listing before the versions' descriptions were kept);
 * - the listing now: each version's description read (`…meta.json`);
 * - the listing of versions written before descriptions were kept (none beside them): read whole once,
 *   described, then listed as now.
 *
 *   node /work/shared/bench/corpus.mjs /tmp/turn-corpus 4000 1
 *   CORPUS=/tmp/turn-corpus BLOCKS=400 VERSIONS=100 ROUNDS=20 node dist/bench/history-list.js
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../core/ids.js';
import { HistoryStore, titleOf, type Version } from '../plugins/history/history-store.js';

const CORPUS = process.env.CORPUS ?? '/tmp/turn-corpus';
const BLOCKS = Number(process.env.BLOCKS ?? 400);
const VERSIONS = Number(process.env.VERSIONS ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 20);

/** Paragraphs of the corpus, in order. */
function paragraphs(folder: string, wanted: number): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= wanted) return;
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) found.push(...readFileSync(join(dir, entry.name), 'utf8').split('\n\n').filter((part) => part.trim() !== '' && !part.startsWith('#')));
    }
  };
  walk(folder);
  if (found.length < wanted) throw new Error(`${folder} holds ${found.length} paragraphs, fewer than ${wanted}: run node /work/shared/bench/corpus.mjs ${folder} 4000 1 first`);
  return found.slice(0, wanted);
}

/** A document file's text as the block store writes it (one JSON tree), of the first `count` paragraphs. */
function documentText(id: string, texts: readonly string[], count: number): string {
  const children = texts.slice(0, count).map((text) => ({ id: newId(), type: 'NodeParagraph', markdown: text, attrs: { updated: '20261203080000' } }));
  return JSON.stringify({ id, type: 'NodeDocument', content: 'A long document', attrs: { title: 'A long document' }, children });
}

/** The listing before descriptions were kept: each version read whole, its text parsed again for the title. */
async function baselineList(folder: string): Promise<number> {
  const names = (await readdir(folder)).filter((name) => name.endsWith('.json') && !name.endsWith('.meta.json')).sort().reverse();
  let listed = 0;
  for (const name of names) {
    const version = JSON.parse(await readFile(join(folder, name), 'utf8')) as Version;
    if (titleOf(version.text) !== '') listed++;
  }
  return listed;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const texts = paragraphs(CORPUS, BLOCKS + VERSIONS);
  const root = await mkdtemp(join(tmpdir(), 'quire-history-'));
  try {
    const store = new HistoryStore(root, { maxVersions: VERSIONS, maxAgeDays: 3650 });
    const doc = newId();
    const start = Date.now() - VERSIONS * 60_000;
    let bytes = 0;
    for (let v = 0; v < VERSIONS; v++) {
      const text = documentText(doc, texts, BLOCKS + v);
      bytes += text.length;
      await store.record({ documentId: doc, op: 'update', by: 'person:bench', notebook: newId(), path: `nb/${doc}.json`, hpath: '/A long document', text }, new Date(start + v * 60_000));
    }
    const folder = join(root, doc);
    console.log(`${VERSIONS} versions of a document of ${BLOCKS}–${BLOCKS + VERSIONS - 1} corpus paragraphs (${(bytes / VERSIONS / 1024).toFixed(0)} KiB a version on average), load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
    const baseline: number[] = [];
    const now: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, so that the page cache and the machine's load treat both alike.
      let started = performance.now();
      if (await baselineList(folder) !== VERSIONS) throw new Error('the baseline listed too few versions');
      baseline.push(performance.now() - started);
      started = performance.now();
      if ((await store.list(doc)).length !== VERSIONS) throw new Error('the listing listed too few versions');
      now.push(performance.now() - started);
    }
    // Versions kept before descriptions were: none beside them; the first listing reads each whole and describes it.
    for (const name of await readdir(folder)) if (name.endsWith('.meta.json')) await rm(join(folder, name));
    let started = performance.now();
    await store.list(doc);
    const firstWithout = performance.now() - started;
    started = performance.now();
    await store.list(doc);
    const secondAfter = performance.now() - started;
    const b = median(baseline);
    const n = median(now);
    console.log(`  baseline (each version read whole, title parsed again): median ${b.toFixed(1)} ms a listing`);
    console.log(`  now (each version's description read): median ${n.toFixed(2)} ms a listing (${(b / n).toFixed(1)}x faster; ${ROUNDS} listings each, alternating)`);
    console.log(`  versions without descriptions (kept before): the first listing ${firstWithout.toFixed(1)} ms (reads and describes each), the next ${secondAfter.toFixed(2)} ms`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
