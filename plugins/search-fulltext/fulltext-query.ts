import type Database from 'better-sqlite3';
import { KernelError } from '../../core/index.js';
import { documentOfPath, ftsColumnFilters } from '../blocks/fts-filters.js';
import { searchText } from '../blocks/search-text.js';
import { rankPhraseHits, type PhraseHit } from './phrase-ranking.js';
import { parseQuery, type Term } from './query-language.js';
import { snippet } from './snippet.js';

export interface FulltextInput {
  query: string;
  notebooks?: string[];
  /** A document id, or a path prefix such as `<notebook>/<document>`: the document and those below it. */
  path?: string;
  types?: string[];
  subtypes?: string[];
  page?: number;
  pageSize?: number;
  /** Count hits per document also above DOCUMENTS_COUNTED_BELOW hits. */
  documentCounts?: boolean;
}

/** Column weights for bm25, in the table's column order: a hit in a block's name outranks one in its text. */
const WEIGHTS = [1, 10, 8, 2, 5, 0, 0, 0, 0];
const SEARCHED = '{content name alias memo tags}';
const DOCUMENT_COUNTS = 50;
/**
 * The hits the page is ranked from and the hits per document are counted over: the first FIRST_HITS
 * (`rankedOver`, `documentsCountedOver` say how many). bm25 reads each hit's column sizes, 1 to 3 µs a
 * hit at a million blocks, so that ranking 50,000 (as before) made a word in most blocks cost 100 ms
 * and more.
 */
const FIRST_HITS = 10_000;
/**
 * Words with more hits than this (a stop word, a short prefix) are not ranked: their page is the hits
 * last added to the index (highest rowid) first. bm25 weighs each term by how rare it is, which FTS5
 * finds by a pass over all of the term's rows before scoring any: 45 to 115 ms at a million blocks for
 * a word in 60 to 94% of them, whatever the number of hits scored; such a word discriminates little.
 */
const MANY_HITS = 50_000;
/**
 * Hits per document cost a lookup per hit (block_docs), a third to a whole of the FTS5 query itself for
 * a word in thousands of blocks: they are counted unasked only up to this many hits.
 */
const DOCUMENTS_COUNTED_BELOW = 1_000;
const JOIN_BELOW = 5_000;
/** Hits counted at most; beyond, `total` is this number and `totalIsLowerBound` is set. */
const COUNT_CAP = 100_000;
/**
 * For a phrase of several tokens (probeFirst), a short pass before ranking reads the first PROBE hits in
 * rowid order (which FTS5 keeps without sorting). Fewer than PROBE, they are all the hits. Else how
 * densely they lie tells about how many there are, which decides ranked or not, and hits per document
 * or not; the ranked pass then counts what it ranks, and an estimate the exact count contradicts is set
 * right by making the page again (hits bunched in one part of the index). For a phrase, bm25's own pass
 * over every hit (for its weights) costs what a count would, so a misjudged common phrase costs one
 * such pass more, not the 45–115 ms a common word's weights would.
 * Counting every hit first was a third evaluation of the query (bm25 evaluates it once for its weights,
 * once for the page): for a phrase of CJK characters at a million blocks, 5 ms of a 14 ms ranking,
 * where the probe costs 0.3 ms (a probe from the other end too cost as much as the count it replaced,
 * for an English phrase: 1.0 + 1.5 ms against 2.5).
 * Fewer than PROBE hits of a query of one phrase are ranked here from what the probe found
 * (rankProbedPhrase): the probe is then the only evaluation of the phrase (with a join, beside the
 * count of the phrase's own hits that chose the join).
 */
const PROBE = 101;

export interface SearchOptions {
  /** Filters are applied by a join when the words alone have at most this many hits (tests force one way or the other). */
  joinBelow?: number;
  /** Words with more hits than this are not ranked by bm25 (MANY_HITS; tests lower it). */
  manyHits?: number;
  /** Rank a one-phrase query's hits here when the probe found them all (phrase-ranking.ts); default true. */
  rankProbedPhrases?: boolean;
  /**
   * Threads that run the queries, each with its own read-only connection (fulltext-search.ts); 0 runs
   * them on the main thread, as before. Default QUERY_WORKERS.
   */
  queryWorkers?: number;
}

interface Hit { rowid: number; rank: number }

interface PageWay { unranked: boolean; countDocuments: boolean }

/** What the probe found: about how many hits, and all of them when there are fewer than PROBE. */
interface Probe { hits: number; all?: number[] }

interface PagePass {
  hits: Hit[];
  counts: { documentId: string; hits: number }[];
  /** How many hits the ranked pass read (at most FIRST_HITS): all of them when fewer. */
  rankedHits?: number | undefined;
}

/** A row of the one-pass query: a hit of the page (page 0: rowid, bm25), a document's count (page 1), or the number of hits read (page 2). */
interface FirstHitsRow { page: 0 | 1 | 2; id: number | string | null; value: number }

type Prepared = (sql: string) => Database.Statement;

interface Plan {
  from: string;
  where: string;
  params: unknown[];
  /** At most this many hits: the words' own count, when the filters are applied by a join. */
  atMost?: number;
  /** How the filters are applied: none, by a join (atMost is then the words' own count) or in the FTS expression. */
  filtered: 'none' | 'join' | 'columns';
}

/**
 * Two ways to apply the filters, with the same answers. Words with few hits: look their blocks up in
 * `blocks` and filter there (a few thousand primary-key lookups). Words with many hits: constrain FTS
 * columns, which intersects doclists instead. Intersecting with a notebook's doclist of 500,000 rows
 * costs about 20 ms even for a rare word, which the join avoids; a join over 100,000 hits costs more.
 */
function choosePlan(prepared: Prepared, terms: string, input: FulltextInput, notebooks: string[] | undefined, joinBelow = JOIN_BELOW): Plan {
  const columnFilters = filters(input, notebooks);
  if (columnFilters.length === 0) return { from: 'blocks_fts f', where: 'blocks_fts MATCH ?', params: [terms], filtered: 'none' };
  const wordHits = prepared(`SELECT count(*) FROM (SELECT 1 FROM blocks_fts WHERE blocks_fts MATCH ? LIMIT ${joinBelow + 1})`).pluck().get(terms) as number;
  if (wordHits > joinBelow) return { from: 'blocks_fts f', where: 'blocks_fts MATCH ?', params: [[terms, ...columnFilters].join(' AND ')], filtered: 'columns' };
  const where = ['blocks_fts MATCH ?'];
  const params: unknown[] = [terms];
  // The narrow block_docs row answers the notebook; only the rarer filters need the wide blocks row.
  const wide = input.path !== undefined || Boolean(input.types?.length) || Boolean(input.subtypes?.length);
  if (notebooks !== undefined) { where.push('m.notebook IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(notebooks)); }
  if (input.path !== undefined) {
    const document = documentOfPath(input.path);
    where.push("(b.root_id = ? OR instr('/' || b.path, '/' || ? || '/') > 0)");
    params.push(document, document);
  }
  if (input.types?.length) { where.push('b.type IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(input.types)); }
  if (input.subtypes?.length) { where.push('b.subtype IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(input.subtypes)); }
  const from = `blocks_fts f${notebooks !== undefined ? ' JOIN block_docs m ON m.rowid = f.rowid' : ''}${wide ? ' JOIN blocks b ON b.rowid = f.rowid' : ''}`;
  return { from, where: where.join(' AND '), params, atMost: wordHits, filtered: 'join' };
}

/**
 * The hits of the plan: exact below PROBE, else about how many from how densely the first PROBE lie (at
 * most the plan's own count when it has one). See PROBE.
 */
function probeHits(prepared: Prepared, plan: Plan, indexSpan: () => number): Probe {
  const first = prepared(`SELECT f.rowid FROM ${plan.from} WHERE ${plan.where} ORDER BY f.rowid LIMIT ${PROBE}`).pluck().all(...plan.params) as number[];
  if (first.length < PROBE) return { hits: first.length, all: first };
  const spread = Math.round((first.length * indexSpan()) / Math.max(1, first[first.length - 1]! - first[0]! + 1));
  return { hits: Math.min(plan.atMost ?? Infinity, spread) };
}

/**
 * A query of one phrase whose every hit the probe found: ranked here (phrase-ranking.ts), one evaluation
 * of the phrase in all instead of three. Needs the phrase's own number of rows, which is the probe's
 * when nothing filters and the words' count when a join filters; undefined otherwise, or when the
 * ranking cannot be exact.
 */
function rankProbedPhrase(prepared: Prepared, plan: Plan, terms: readonly Term[], probe: Probe | undefined, searchText: (text: string) => string): PhraseHit[] | undefined {
  const term = terms[0];
  if (probe?.all === undefined || terms.length !== 1 || term === undefined || term.negated || term.prefix) return undefined;
  const rowsWithPhrase = plan.filtered === 'none' ? probe.all.length : plan.filtered === 'join' ? plan.atMost : undefined;
  if (rowsWithPhrase === undefined) return undefined;
  const [content, name, alias, memo, tags] = WEIGHTS;
  return rankPhraseHits(prepared, searchText, { text: searchText(term.text), rowsWithPhrase, weights: [content!, name!, alias!, memo!, tags!] }, probe.all);
}

/** Hits per document, most first (then by id), as the ranked pass's SQL counts them. */
function documentCounts(hits: readonly PhraseHit[]): { documentId: string; hits: number }[] {
  const counts = new Map<string, number>();
  for (const hit of hits) counts.set(hit.documentId, (counts.get(hit.documentId) ?? 0) + 1);
  return [...counts].map(([documentId, n]) => ({ documentId, hits: n }))
    .sort((a, b) => b.hits - a.hits || (a.documentId < b.documentId ? -1 : a.documentId > b.documentId ? 1 : 0))
    .slice(0, DOCUMENT_COUNTS);
}

/**
 * Whether to estimate the hits by a probe (PROBE) rather than count them first: only for a phrase of
 * several tokens (quoted words, a run of CJK characters), whose every hit is a check of positions, so a
 * count costs a third of the search. A word is counted first: its count is cheap (1.6 ms for a word in
 * 2,400 blocks, filtered to a notebook), and a common word misjudged as rare would pay bm25's weights
 * over all its rows (45–115 ms). A prefix merges the doclists of every word it begins before its first
 * hit, which a probe would pay again (8 ms of 25).
 */
function probeFirst(terms: readonly Term[], prepare: (text: string) => string): boolean {
  const searched = terms.filter((term) => !term.negated);
  if (searched.some((term) => term.prefix)) return false;
  return searched.some((term) => prepare(term.text).split(/[^\p{L}\p{N}]+/u).filter(Boolean).length > 1);
}

/**
 * The page: unranked (last added first), ranked, or ranked with the hits per document, in one pass each;
 * with `countRanked`, the ranked page also says how many hits it was ranked from (a window count, 0.7 ms
 * over 2,400 hits at a million blocks).
 */
function pagePass(prepared: Prepared, plan: Plan, pageParams: unknown[], { unranked, countDocuments }: PageWay, countRanked: boolean): PagePass {
  if (unranked) {
    return { counts: [], hits: prepared(`SELECT f.rowid AS rowid, 0 AS rank FROM ${plan.from} WHERE ${plan.where} ORDER BY f.rowid DESC LIMIT ? OFFSET ?`).all(...pageParams) as Hit[] };
  }
  const ranked = `SELECT f.rowid AS rowid, bm25(blocks_fts, ${WEIGHTS.join(', ')}) AS rank FROM ${plan.from} WHERE ${plan.where} LIMIT ${FIRST_HITS}`;
  if (!countDocuments && !countRanked) return { counts: [], hits: prepared(`SELECT rowid, rank FROM (${ranked}) ORDER BY rank LIMIT ? OFFSET ?`).all(...pageParams) as Hit[] };
  if (!countDocuments) {
    const rows = prepared(`SELECT rowid, rank, count(*) OVER () AS ranked FROM (${ranked}) ORDER BY rank LIMIT ? OFFSET ?`).all(...pageParams) as (Hit & { ranked: number })[];
    return { counts: [], hits: rows, rankedHits: rows[0]?.ranked };
  }
  // One pass over the hits for the page, the counts per document and their number, through the narrow
  // block_docs rows: a second pass would cost the FTS5 query again.
  const rows = prepared(`WITH hits AS MATERIALIZED (${ranked})
    SELECT 0 AS page, rowid AS id, rank AS value FROM (SELECT rowid, rank FROM hits ORDER BY rank LIMIT ? OFFSET ?)
    UNION ALL
    SELECT 1, documentId, hits FROM (
      SELECT m.root_id AS documentId, count(*) AS hits FROM hits JOIN block_docs m ON m.rowid = hits.rowid
      GROUP BY m.root_id ORDER BY hits DESC, documentId LIMIT ${DOCUMENT_COUNTS})
    UNION ALL
    SELECT 2, NULL, count(*) FROM hits`).all(...pageParams) as FirstHitsRow[];
  return {
    hits: rows.filter((row) => row.page === 0).map((row) => ({ rowid: row.id as number, rank: row.value })),
    counts: rows.filter((row) => row.page === 1).map((row) => ({ documentId: row.id as string, hits: row.value })),
    rankedHits: rows.find((row) => row.page === 2)?.value,
  };
}

interface BlockRow { rowid: number; id: string; type: string; subtype: string | null; root_id: string; notebook: string; hpath: string; content: string }

/** One full-text query, as the main thread hands it to whichever connection runs it. */
export interface FulltextRequest {
  input: FulltextInput;
  /** The notebooks the caller may search (reader and deny scopes applied already), or undefined for all. */
  scope: string[] | undefined;
  /**
   * The caller may not see every notebook: bm25 weighs words by their counts in the whole index, so its
   * scores told a reader how many private blocks hold a word. The order stays bm25's; the score is the
   * rank's (1 for the first, ½ for the second…).
   */
  rankScores?: boolean;
  options: SearchOptions;
}

export interface FulltextHit {
  id: string;
  documentId: string;
  notebook: string;
  hpath: string;
  type: string;
  subtype: string | null;
  snippet: string;
  score: number;
}

export interface FulltextAnswer {
  query: string;
  page: number;
  pageSize: number;
  total: number;
  totalIsLowerBound: boolean;
  rankedOver: number;
  documents: { documentId: string; hpath: string; hits: number }[];
  documentsCountedOver: number;
  results: FulltextHit[];
}

/**
 * Full-text queries over one read-only connection to the blocks index: the SQL half of the search,
 * which runs on a query worker (fulltext-worker.ts) or, where there is none, on the main thread. Whoever
 * calls it has checked the query and applied the caller's scope (fulltext-search.ts).
 */
export function createFulltextQuery(db: Database.Database): (request: FulltextRequest) => FulltextAnswer {
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, statement = db.prepare(sql));
    return statement;
  };
  /**
   * How many rowids the full-text rows span. block_docs has their rowids as a plain b-tree: a min() and
   * a max() each alone in its query are a seek each; both in one query scanned the million rows (60 ms).
   */
  const indexSpan = (): number => {
    const rows = prepared('SELECT (SELECT min(rowid) FROM block_docs) AS low, (SELECT max(rowid) FROM block_docs) AS high').get() as { low: number | null; high: number | null };
    return (rows.high ?? 0) - (rows.low ?? 0) + 1;
  };
  // One read transaction for all of a query's statements: on a worker thread, a commit may land between
  // two of them (the writer is on the main thread), and a rowid the scoped pass found could by then be
  // another block's (a rebuild numbers rows anew; a removed last row's rowid is given again).
  const inOneSnapshot = db.transaction((request: FulltextRequest) => query(request));
  return (request) => {
    try {
      return inOneSnapshot(request);
    } catch (error) {
      // The compiler quotes every term, so this would be a defect, not the person's fault; still, no
      // SQLite message (or 500) reaches them.
      if (error instanceof Error && error.name === 'SqliteError') throw sqliteFailure(error as Error & { code?: string });
      throw error;
    }
  };

  function query({ input, scope, rankScores, options }: FulltextRequest): FulltextAnswer {
    const parsed = parseQuery(input.query, searchText);
    if (!parsed.ok) throw new KernelError('INVALID_INPUT', parsed.message, { details: { field: 'query' } });
    const page = input.page ?? 1;
    const pageSize = input.pageSize ?? 20;
    const empty: FulltextAnswer = { query: input.query, page, pageSize, total: 0, totalIsLowerBound: false, rankedOver: 0, documents: [], documentsCountedOver: 0, results: [] };
    if (scope !== undefined && scope.length === 0) return empty;
    const terms = `${SEARCHED}: ${parsed.expression}`;
    const plan = choosePlan(prepared, terms, input, scope, options.joinBelow);
    const countAll = (): number => prepared(`SELECT count(*) FROM (SELECT 1 FROM ${plan.from} WHERE ${plan.where} LIMIT ${COUNT_CAP + 1})`).pluck().get(...plan.params) as number;
    /** The exact number of hits (up to COUNT_CAP + 1), once known. */
    let counted = probeFirst(parsed.terms, searchText) ? undefined : countAll();
    const probe = counted === undefined ? probeHits(prepared, plan, indexSpan) : undefined;
    const likely = counted ?? probe!.hits;
    if (likely < PROBE) counted ??= likely;
    if (likely === 0) return empty;
    const pageParams = [...plan.params, pageSize, (page - 1) * pageSize];
    /** How to answer for `hitCount` hits (estimated or counted). */
    const decide = (hitCount: number): PageWay => {
      const unranked = hitCount > (options.manyHits ?? MANY_HITS) && input.documentCounts !== true;
      return { unranked, countDocuments: !unranked && (hitCount <= DOCUMENTS_COUNTED_BELOW || input.documentCounts === true) };
    };
    let way = decide(likely);
    const rankedHere = way.unranked || options.rankProbedPhrases === false ? undefined : rankProbedPhrase(prepared, plan, parsed.terms, probe, searchText);
    // The ranked pass counts its hits only where that can be the count: fewer than FIRST_HITS likely.
    let answer = rankedHere
      ? { hits: rankedHere.slice((page - 1) * pageSize, page * pageSize), counts: documentCounts(rankedHere), rankedHits: rankedHere.length }
      : pagePass(prepared, plan, pageParams, way, counted === undefined && likely < FIRST_HITS);
    counted ??= answer.rankedHits !== undefined && answer.rankedHits < FIRST_HITS ? answer.rankedHits : countAll();
    // The estimate misled: the page again as the exact count has it, ranked or not, with the documents
    // counted (below DOCUMENTS_COUNTED_BELOW). Counts made for more hits than that, unasked, are left
    // out, as for any such word.
    const exact = decide(counted);
    if (exact.unranked !== way.unranked || (exact.countDocuments && !way.countDocuments)) answer = pagePass(prepared, plan, pageParams, way = exact, false);
    const { unranked } = way;
    const countDocuments = way.countDocuments && exact.countDocuments;
    const { hits } = answer;
    const counts = countDocuments ? answer.counts : [];
    const total = Math.min(counted, COUNT_CAP);
    const rankedOver = unranked ? 0 : Math.min(total, FIRST_HITS);
    // Within the scope again: what the passes found in it, checked where the text is read.
    const rowids = JSON.stringify(hits.map((hit) => hit.rowid));
    const rows = new Map(((scope === undefined
      ? prepared('SELECT rowid, id, type, subtype, root_id, notebook, hpath, content FROM blocks WHERE rowid IN (SELECT value FROM json_each(?))').all(rowids)
      : prepared('SELECT rowid, id, type, subtype, root_id, notebook, hpath, content FROM blocks WHERE rowid IN (SELECT value FROM json_each(?)) AND notebook IN (SELECT value FROM json_each(?))').all(rowids, JSON.stringify(scope))
    ) as BlockRow[]).map((row) => [row.rowid, row]));
    const words = parsed.terms.filter((term) => !term.negated).map((term) => term.text);
    const scoreOf = (hit: Hit, position: number): number => (unranked ? 0 : rankScores === true ? 1 / ((page - 1) * pageSize + position + 1) : 0 - hit.rank /* an unranked hit scores 0, not -0 */);
    const results = hits.flatMap((hit, position) => {
      const row = rows.get(hit.rowid);
      return row ? [{ id: row.id, documentId: row.root_id, notebook: row.notebook, hpath: row.hpath, type: row.type, subtype: row.subtype, snippet: snippet(row.content, words), score: scoreOf(hit, position) }] : [];
    });
    const hpaths = new Map((prepared('SELECT id, hpath FROM documents WHERE id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(counts.map((count) => count.documentId))) as { id: string; hpath: string }[]).map((doc) => [doc.id, doc.hpath]));
    const documents = counts.map((count) => ({ documentId: count.documentId, hpath: hpaths.get(count.documentId) ?? '', hits: count.hits }));
    return { query: input.query, page, pageSize, total, totalIsLowerBound: counted > COUNT_CAP, rankedOver, documents, documentsCountedOver: countDocuments ? Math.min(total, FIRST_HITS) : 0, results };
  }
}

/**
 * What a SQLite error says to the caller. A plain SQLITE_ERROR is the query's (FTS5 refused the
 * expression). An index that cannot be read for now (locked, its locks never free) is not: 503, try
 * again; anything else (an I/O error, a damaged file) is the kernel's.
 */
function sqliteFailure(error: Error & { code?: string }): KernelError {
  const code = error.code ?? '';
  if (code === 'SQLITE_ERROR') return new KernelError('INVALID_INPUT', 'The query could not be searched; try fewer or simpler words', { details: { field: 'query' } });
  if (/^SQLITE_(BUSY|LOCKED|PROTOCOL)/.test(code)) return new KernelError('NOT_READY', 'The index could not be read just now (it is locked); try again', { details: { sqlite: code, retryAfterSeconds: 1 } });
  return new KernelError('INTERNAL', `The index could not be read (${code || 'SQLite error'})`, { cause: error, details: { sqlite: code } });
}


function filters(input: FulltextInput, notebooks: string[] | undefined): string[] {
  return ftsColumnFilters({ notebooks, document: input.path === undefined ? undefined : documentOfPath(input.path), types: input.types, subtypes: input.subtypes });
}
