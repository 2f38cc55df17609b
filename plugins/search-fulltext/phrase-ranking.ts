import type Database from 'better-sqlite3';
import { mayCrossParts, phraseInstances, unicode61Tokens } from './unicode61-tokens.js';

/**
 * bm25 for the hits of one phrase when all of them are already known (fewer than the probe's limit),
 * computed here as FTS5's bm25() computes it (sqlite3.c, fts5Bm25Function), instead of by a ranked
 * FTS5 pass. That pass evaluates the phrase twice (once over every row for the phrase's weight, once for
 * the page), and the probe that found the hits had evaluated it already: three evaluations of a phrase
 * whose words are common (the hits are few, the words' rows are not), against the bare query's two.
 * Here: the table's row and token counts (one record), each hit's size (its docsize row) and each hit's
 * instances of the phrase per column, counted in the block's text with the index's own tokens.
 * Undefined whenever that cannot be exact: a character outside those unicode61Tokens knows, a hit whose
 * rows are gone, an instance that could run across two tags, or more text than MAX_TEXT_CHARS to read
 * again (a few huge blocks would cost more than the pass they replace). The caller then lets FTS5 rank.
 * The arithmetic is FTS5's, operation for operation; only the logarithm of the phrase's weight may differ
 * in its last bit between C's log and JavaScript's, the same for every hit, so the order does not.
 */

const K1 = 1.2;
const B = 0.75;
/** FTS5's record of the row count and the token count per column (FTS5_AVERAGES_ROWID). */
const AVERAGES_ROWID = 1;
/** At most this many characters of the hits' text are tokenized again (100 hits of about 2,000). */
const MAX_TEXT_CHARS = 200_000;

/** How many queries were ranked here: for tests, which check that this path, not FTS5's, answered. */
export const phraseRankingCount = { ranked: 0 };

export interface PhraseHit {
  rowid: number;
  /** bm25 as FTS5 gives it: negative, lower is better. */
  rank: number;
  documentId: string;
}

/** The text and number of the phrase, and the weights of the columns it is searched in. */
export interface PhraseQuery {
  /** The phrase as the index's text (searchText applied), as the FTS5 expression holds it. */
  text: string;
  /** Rows in which the phrase occurs in the searched columns, over the whole table (bm25's nHit). */
  rowsWithPhrase: number;
  /** Weights of content, name, alias, memo and tags, in that order. */
  weights: readonly [number, number, number, number, number];
}

type Prepared = (sql: string) => Database.Statement;

/** SQLite's varint: seven bits a byte while the high bit is set, the ninth byte whole. */
function varints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    let value = 0;
    let i = 0;
    for (; i < 8; i++) {
      const byte = bytes[at + i]!;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    if (i === 8) value = value * 256 + bytes[at + 8]!;
    at += Math.min(i, 8) + 1;
    out.push(value);
  }
  return out;
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

interface HitRow { rowid: number; id: string; root_id: string; content: string }

/** The hits ranked as `ORDER BY bm25(blocks_fts, …weights)` would rank them (ties by rowid), or undefined. */
export function rankPhraseHits(prepared: Prepared, searchText: (text: string) => string, query: PhraseQuery, rowids: readonly number[]): PhraseHit[] | undefined {
  const phrase = unicode61Tokens(query.text);
  if (phrase === undefined || phrase.length === 0 || rowids.length === 0) return undefined;
  const averages = prepared(`SELECT block FROM blocks_fts_data WHERE id = ${AVERAGES_ROWID}`).pluck().get() as Uint8Array | undefined;
  if (averages === undefined) return undefined;
  const [rowCount = 0, ...columnTokens] = varints(averages);
  if (rowCount <= 0) return undefined;
  const averageLength = sum(columnTokens) / rowCount;
  let idf = Math.log((rowCount - query.rowsWithPhrase + 0.5) / (query.rowsWithPhrase + 0.5));
  if (idf <= 0) idf = 1e-6;

  const list = JSON.stringify(rowids);
  const sizes = new Map((prepared('SELECT id, sz FROM blocks_fts_docsize WHERE id IN (SELECT value FROM json_each(?))').all(list) as { id: number; sz: Uint8Array }[])
    .map((row) => [row.id, sum(varints(row.sz))]));
  const rows = prepared('SELECT rowid, id, root_id, content FROM blocks WHERE rowid IN (SELECT value FROM json_each(?))').all(list) as HitRow[];
  if (rows.length !== rowids.length || sizes.size !== rowids.length) return undefined;
  if (rows.reduce((chars, row) => chars + row.content.length, 0) > MAX_TEXT_CHARS) return undefined;
  const ids = JSON.stringify(rows.map((row) => row.id));
  const attributes = new Map<string, Map<string, string>>();
  for (const row of prepared("SELECT block_id, name, value FROM attributes WHERE block_id IN (SELECT value FROM json_each(?)) AND name IN ('name', 'alias', 'memo')").all(ids) as { block_id: string; name: string; value: string }[]) {
    attributes.set(row.block_id, (attributes.get(row.block_id) ?? new Map<string, string>()).set(row.name, row.value));
  }
  const tags = new Map<string, string[]>();
  for (const row of prepared('SELECT block_id, tag FROM tags WHERE block_id IN (SELECT value FROM json_each(?))').all(ids) as { block_id: string; tag: string }[]) {
    tags.set(row.block_id, [...(tags.get(row.block_id) ?? []), row.tag]);
  }

  const [wContent, wName, wAlias, wMemo, wTags] = query.weights;
  const hits: PhraseHit[] = [];
  for (const row of rows) {
    const attrs = attributes.get(row.id);
    const texts: [string, number][] = [[row.content, wContent], [attrs?.get('name') ?? '', wName], [attrs?.get('alias') ?? '', wAlias], [attrs?.get('memo') ?? '', wMemo]];
    // FTS5 adds each instance's column weight to the phrase's frequency in the row.
    let frequency = 0;
    for (const [text, weight] of texts) {
      const tokens = text === '' ? [] : unicode61Tokens(searchText(text));
      if (tokens === undefined) return undefined;
      frequency += phraseInstances(tokens, phrase) * weight;
    }
    const tagTokens: string[][] = [];
    for (const tag of tags.get(row.id) ?? []) {
      const tokens = unicode61Tokens(searchText(tag));
      if (tokens === undefined) return undefined;
      tagTokens.push(tokens);
    }
    if (mayCrossParts(tagTokens, phrase)) return undefined;
    for (const tokens of tagTokens) frequency += phraseInstances(tokens, phrase) * wTags;
    // Every hit holds the phrase in a searched column; none found means these tokens are not FTS5's.
    if (frequency === 0) return undefined;
    const size = sizes.get(row.rowid)!;
    const score = idf * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * size / averageLength)));
    hits.push({ rowid: row.rowid, rank: -1.0 * score, documentId: row.root_id });
  }
  phraseRankingCount.ranked++;
  return hits.sort((a, b) => a.rank - b.rank || a.rowid - b.rowid);
}
