/**
 * Full-text search steps before and after issue 14 point 3, on an existing workspace index (read-only,
 * safe beside `serve`), alternating query by query in one run:
 *   A (before): default pragmas; count pass (cap 100k); ranked top-20; rows; snippets folded one character
 *     at a time; hits per document by a join with the wide `blocks` rows (first 10k hits).
 *   B (now): the kernel's reader (mmap, page cache); count pass (cap 100k); top-20 by bm25 of the first 10k
 *     hits (above 50k hits, unranked: last rowid first), with hits per document over `block_docs` in the same pass when there are at most 1,000 hits
 *     (above, only when asked); rows; the plugin's snippets; hpaths.
 * Also the bare FTS5 top-20 and the index's bytes per block by table (dbstat).
 *
 *   node dist/bench/fulltext-steps.js WORKSPACE QUERIES_JSON    (queries.json of /work/shared/bench/corpus.mjs)
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openIndexReader } from '../plugins/blocks/index-schema.js';
import { searchText } from '../plugins/blocks/search-text.js';
import { parseQuery } from '../plugins/search-fulltext/query-language.js';
import { snippet } from '../plugins/search-fulltext/snippet.js';

const [workspace, queriesFile] = process.argv.slice(2);
if (!workspace || !queriesFile) throw new Error('usage: fulltext-steps WORKSPACE QUERIES_JSON');
const file = join(workspace, 'index', 'quire.db');
const queries = (JSON.parse(readFileSync(queriesFile, 'utf8')) as { queries: Record<string, string[]> }).queries;
const W = '1, 10, 8, 2, 5, 0, 0, 0, 0';
const now = (): number => performance.now();
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;
const f = (x: number): string => x.toFixed(2);

const LOOKALIKE = /[øØłŁđĐħĦıßæÆœŒþÞðÐ]/gu;
/** The snippet fold as it was: NFKD, marks and look-alikes removed, lower case, one character at a time. */
function oldSnippetCost(text: string, terms: readonly string[]): number {
  let folded = '';
  const origin: number[] = [];
  let index = 0;
  for (const char of text) {
    const plain = char.normalize('NFKD').replace(/\p{M}/gu, '').replace(LOOKALIKE, 'x').toLowerCase();
    for (let k = 0; k < plain.length; k++) origin.push(index);
    folded += plain;
    index += char.length;
  }
  let found = 0;
  for (const term of terms) found += folded.indexOf(term.toLowerCase()) === -1 ? 0 : 1;
  return found;
}

function statements(db: Database.Database, rankCap: number) {
  return {
    bare: db.prepare(`SELECT rowid, bm25(blocks_fts, ${W}) AS r FROM blocks_fts WHERE blocks_fts MATCH ? ORDER BY r LIMIT 20`),
    count: db.prepare('SELECT count(*) FROM (SELECT 1 FROM blocks_fts f WHERE blocks_fts MATCH ? LIMIT 100001)').pluck(),
    ranked: db.prepare(`SELECT rowid, rank FROM (SELECT f.rowid AS rowid, bm25(blocks_fts, ${W}) AS rank FROM blocks_fts f WHERE blocks_fts MATCH ? LIMIT ${rankCap}) ORDER BY rank LIMIT 20 OFFSET 0`),
    unranked: db.prepare('SELECT f.rowid AS rowid, 0 AS rank FROM blocks_fts f WHERE blocks_fts MATCH ? ORDER BY f.rowid DESC LIMIT 20 OFFSET 0'),
    rows: db.prepare('SELECT rowid, id, type, subtype, root_id, notebook, hpath, content FROM blocks WHERE rowid IN (SELECT value FROM json_each(?))'),
    wideDocs: db.prepare(`SELECT d.root_id AS documentId, d.hpath, count(*) AS hits FROM (SELECT f.rowid AS rowid FROM blocks_fts f WHERE blocks_fts MATCH ? LIMIT 10000) x
      JOIN blocks d ON d.rowid = x.rowid GROUP BY d.root_id ORDER BY hits DESC, d.root_id LIMIT 50`),
    onePass: db.prepare(`WITH hits AS MATERIALIZED (SELECT f.rowid AS rowid, bm25(blocks_fts, ${W}) AS rank FROM blocks_fts f WHERE blocks_fts MATCH ? LIMIT 10000)
      SELECT 0 AS page, rowid AS id, rank AS value FROM (SELECT rowid, rank FROM hits ORDER BY rank LIMIT 20 OFFSET 0)
      UNION ALL
      SELECT 1, documentId, hits FROM (SELECT m.root_id AS documentId, count(*) AS hits FROM hits JOIN block_docs m ON m.rowid = hits.rowid
        GROUP BY m.root_id ORDER BY hits DESC, documentId LIMIT 50)`),
    hpaths: db.prepare('SELECT id, hpath FROM documents WHERE id IN (SELECT value FROM json_each(?))'),
  };
}

const before = new Database(file, { readonly: true, fileMustExist: true });
const after = openIndexReader(file);
const A = statements(before, 50_000);
const B = statements(after, 10_000);
console.log(`${workspace}: node ${process.version}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| query kind | bare top-20 | A before: count | docs (wide) | snippets | A total | B now: page (+ docs when ≤1k hits) | count | snippets | B total | B/A | B/bare |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const [kind, list] of Object.entries(queries)) {
  if (kind.includes('notebook filter')) continue;
  const t: Record<string, number[]> = { bare: [], aCount: [], aDocs: [], aSnip: [], a: [], bDocs: [], bCount: [], bSnip: [], b: [] };
  for (const [i, query] of list.entries()) {
    const parsed = parseQuery(query, searchText);
    if (!parsed.ok) continue;
    const e = `{content name alias memo tags}: ${parsed.expression}`;
    const words = parsed.terms.filter((x) => !x.negated).map((x) => x.text);
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    const sample: Record<string, number> = {};
    let t0 = now();
    A.bare.all(e);
    sample.bare = now() - t0;
    for (const side of order) {
      if (side === 'a') {
        const start = now();
        A.count.get(e);
        sample.aCount = now() - start;
        const hits = A.ranked.all(e) as { rowid: number }[];
        const rows = A.rows.all(JSON.stringify(hits.map((h) => h.rowid))) as { content: string }[];
        t0 = now();
        for (const row of rows) oldSnippetCost(row.content, words);
        sample.aSnip = now() - t0;
        t0 = now();
        A.wideDocs.all(e);
        sample.aDocs = now() - t0;
        sample.a = now() - start;
      } else {
        const start = now();
        const counted = B.count.get(e) as number;
        sample.bCount = now() - start;
        t0 = now();
        let pageRowids: unknown[];
        let documentIds: unknown[] = [];
        if (counted > 1_000) pageRowids = ((counted > 50_000 ? B.unranked : B.ranked).all(e) as { rowid: number }[]).map((row) => row.rowid);
        else {
          const first = B.onePass.all(e) as { page: number; id: number | string }[];
          pageRowids = first.filter((row) => row.page === 0).map((row) => row.id);
          documentIds = first.filter((row) => row.page === 1).map((row) => row.id);
        }
        sample.bDocs = now() - t0;
        const rows = B.rows.all(JSON.stringify(pageRowids)) as { content: string }[];
        t0 = now();
        for (const row of rows) snippet(row.content, words);
        sample.bSnip = now() - t0;
        const counts = documentIds.map((documentId) => ({ documentId }));
        B.hpaths.all(JSON.stringify(counts.map((c) => c.documentId)));
        sample.b = now() - start;
      }
    }
    if (i < 3) continue; // warm-up
    for (const [key, value] of Object.entries(sample)) t[key]!.push(value);
  }
  const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)])) as Record<string, number>;
  console.log(`| ${kind} | ${f(m.bare!)} | ${f(m.aCount!)} | ${f(m.aDocs!)} | ${f(m.aSnip!)} | ${f(m.a!)} | ${f(m.bDocs!)} | ${f(m.bCount!)} | ${f(m.bSnip!)} | ${f(m.b!)} | ${f(m.b! / m.a!)} | ${f(m.b! / m.bare!)} |`);
}
const blocks = after.prepare('SELECT count(*) FROM blocks').pluck().get() as number;
try {
  const sizes = after.prepare("SELECT CASE WHEN name LIKE 'blocks_fts%' THEN 'blocks_fts (all shadow tables)' ELSE name END AS what, sum(pgsize) AS bytes FROM dbstat GROUP BY what ORDER BY bytes DESC").all() as { what: string; bytes: number }[];
  const total = sizes.reduce((s, x) => s + x.bytes, 0);
  console.log(`index: ${blocks} blocks, ${(total / blocks / 1024).toFixed(2)} KiB per block; by table (bytes per block): ${sizes.slice(0, 8).map((x) => `${x.what} ${Math.round(x.bytes / blocks)}`).join(', ')}`);
} catch (error) {
  console.log(`index: ${blocks} blocks (dbstat not available: ${String(error)})`);
}
console.log(`load at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
before.close();
after.close();
