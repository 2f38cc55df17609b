import type Database from 'better-sqlite3';
import type { Db } from './index-schema.js';
import { searchText } from './search-text.js';

/**
 * The full-text table over the blocks (DESIGN.md §3): block text and the searchable attributes, plus the
 * columns searches filter on. Filters are columns of the FTS table itself because a constraint there
 * (`notebook: … AND term`) costs a fraction of a join against `blocks` (6 ms against 148 ms measured on a
 * million rows). Contentless: the text lives in `blocks`, and snippets are cut from there for the rows
 * of a page only. Its rowid is the block row's rowid.
 *
 * `block_docs`: for each FTS row (same rowid), the document and notebook of its block. Counting hits per
 * document and keeping a rare word's hits to some notebooks read these narrow rows (about 60 bytes)
 * instead of the wide `blocks` rows (1.5 KiB, three to a page), which cost a page read per hit at a
 * million blocks. Written with the FTS row, in the same transaction.
 */
export const FTS_TABLE = `
CREATE VIRTUAL TABLE IF NOT EXISTS blocks_fts USING fts5(
  content, name, alias, memo, tags, notebook, path, type, subtype,
  content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS block_docs (rowid INTEGER PRIMARY KEY, root_id TEXT NOT NULL, notebook TEXT NOT NULL);
`;

/**
 * Bytes of new full-text entries FTS5 gathers in memory before it writes them out as a segment (its
 * 'hashsize', 1 MiB by default). A rebuild or an import fills the table in one transaction: with 1 MiB it
 * wrote a small segment every few thousand blocks and spent its time merging them (22 s of FTS inserts at
 * a million blocks, 12.5–17.9 s with 16 MiB, measured side by side). An ordinary write stays far below it.
 */
export const FTS_PENDING_BYTES = 16 * 2 ** 20;

/** Sets the FTS table's pending-data size (kept in its config table) where it differs. */
export function tuneFts(db: Db): void {
  const current = db.prepare("SELECT v FROM blocks_fts_config WHERE k = 'hashsize'").pluck().get() as number | undefined;
  if (current !== FTS_PENDING_BYTES) db.exec(`INSERT INTO blocks_fts (blocks_fts, rank) VALUES ('hashsize', ${FTS_PENDING_BYTES})`);
}

/**
 * An id as one token (`20261129193700-a1b2c3d` → `20261129193700a1b2c3d`): a filter on it is then a
 * single-token lookup, not a two-token phrase whose first half every id made in that second shares.
 */
export function idToken(id: string): string {
  return id.replace('-', '');
}

/**
 * A subtype as one opaque token (`c++` → `xc2b2b`): the tokenizer would fold its case and split it on
 * punctuation, so a filter on `c` would also find `c++` and `objective-c`.
 */
export function subtypeToken(subtype: string): string {
  return subtype === '' ? '' : `x${Buffer.from(subtype, 'utf8').toString('hex')}`;
}

/** The ids of a document's path (notebook, ancestors, itself) as tokens, for "this document and below". */
export function pathTokens(path: string): string {
  return path.replace(/\.json$/, '').split('/').map(idToken).join(' ');
}

/** Column order of blocks_fts, for bm25 weights. */
export const FTS_COLUMNS = ['content', 'name', 'alias', 'memo', 'tags', 'notebook', 'path', 'type', 'subtype'] as const;

export interface FtsRow {
  root_id: string;
  content: string;
  attrs: ReadonlyMap<string, string> | readonly (readonly [string, string])[];
  tags: readonly string[];
  notebook: string;
  path: string;
  type: string;
  subtype: string | null;
}

/** The values of a blocks_fts row, in FTS_COLUMNS order. */
export type FtsValues = [string, string, string, string, string, string, string, string, string];

/** What the full-text table holds for a block: a pure function of its row, the same on any thread. */
export function ftsValues(row: FtsRow): FtsValues {
  const [content, name, alias, memo, tags, subtype] = ftsBlockValues(row);
  return [content, name, alias, memo, tags, idToken(row.notebook), pathTokens(row.path), row.type, subtype];
}

/** The values of a block's full-text row that depend on the block, not on its document's place. */
export type FtsBlockValues = [content: string, name: string, alias: string, memo: string, tags: string, subtype: string];

export function ftsBlockValues(row: Pick<FtsRow, 'content' | 'attrs' | 'tags' | 'subtype'>): FtsBlockValues {
  const attrs = new Map(row.attrs);
  return [searchText(row.content), searchText(attrs.get('name') ?? ''), searchText(attrs.get('alias') ?? ''),
    searchText(attrs.get('memo') ?? ''), searchText(row.tags.join(' ')), subtypeToken(row.subtype ?? '')];
}

/** Writes the FTS rows; called by BlockIndex inside the same transactions as the block rows. */
export class FtsWriter {
  private readonly insert: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly clearAll: Database.Statement;
  private readonly insertDoc: Database.Statement;
  private readonly removeDoc: Database.Statement;
  private readonly clearDocs: Database.Statement;
  private readonly rowsOf: Database.Statement;
  private readonly attrsOf: Database.Statement;
  private readonly tagsOf: Database.Statement;

  constructor(db: Db) {
    this.insert = db.prepare('INSERT INTO blocks_fts (rowid, content, name, alias, memo, tags, notebook, path, type, subtype) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.remove = db.prepare('DELETE FROM blocks_fts WHERE rowid = ?');
    this.clearAll = db.prepare("INSERT INTO blocks_fts (blocks_fts) VALUES ('delete-all')");
    this.insertDoc = db.prepare('INSERT OR REPLACE INTO block_docs (rowid, root_id, notebook) VALUES (?, ?, ?)');
    this.removeDoc = db.prepare('DELETE FROM block_docs WHERE rowid = ?');
    this.clearDocs = db.prepare('DELETE FROM block_docs');
    this.rowsOf = db.prepare('SELECT rowid, id, root_id, content, notebook, path, type, subtype FROM blocks WHERE root_id = ?');
    this.attrsOf = db.prepare("SELECT block_id, name, value FROM attributes WHERE root_id = ? AND name IN ('name', 'alias', 'memo')");
    this.tagsOf = db.prepare('SELECT block_id, tag FROM tags WHERE root_id = ?');
  }

  write(rowid: number | bigint, row: FtsRow, replacing: boolean): void {
    if (replacing) this.remove.run(rowid);
    this.writeValues(rowid, ftsValues(row), row.root_id, row.notebook);
  }

  /** A new row from values made by ftsValues (on an import's worker), with its block_docs row. */
  writeValues(rowid: number | bigint, values: FtsValues, rootId: string, notebook: string): void {
    this.insert.run(rowid, ...values);
    this.insertDoc.run(rowid, rootId, notebook);
  }

  delete(rowid: number | bigint): void {
    this.remove.run(rowid);
    this.removeDoc.run(rowid);
  }

  clear(): void {
    this.clearAll.run();
    this.clearDocs.run();
  }

  /** Rewrites a document's FTS rows from the block tables (its place changed, its text did not). */
  refreshDocument(rootId: string): void {
    const attrs = new Map<string, [string, string][]>();
    for (const row of this.attrsOf.all(rootId) as { block_id: string; name: string; value: string }[]) {
      attrs.set(row.block_id, [...(attrs.get(row.block_id) ?? []), [row.name, row.value]]);
    }
    const tags = new Map<string, string[]>();
    for (const row of this.tagsOf.all(rootId) as { block_id: string; tag: string }[]) tags.set(row.block_id, [...(tags.get(row.block_id) ?? []), row.tag]);
    for (const block of this.rowsOf.all(rootId) as { rowid: number; id: string; root_id: string; content: string; notebook: string; path: string; type: string; subtype: string | null }[]) {
      this.write(block.rowid, { ...block, attrs: attrs.get(block.id) ?? [], tags: tags.get(block.id) ?? [] }, true);
    }
  }
}
