import type Database from 'better-sqlite3';
import { diskFull } from '../../core/index.js';
import type { Block } from './block-model.js';
import { deriveBlock, ownFingerprint, type DerivedBlock, type DocumentPlace } from './index-rows.js';
import { BulkWriter } from './bulk-writer.js';
import { FtsWriter } from './fts-index.js';
import { changeMarkBump } from './change-mark.js';
import { IndexChangeFeed, type IndexChangeListener } from './index-change-feed.js';
import type { PreparedRows } from './import-rows.js';
import { clearIndex, type Db } from './index-schema.js';
import type { NotebookConf } from './notebook-conf.js';

export interface DocumentRecord {
  id: string;
  notebook: string;
  parent_doc: string | null;
  path: string;
  hpath: string;
  title: string;
  mtime_ms: number;
  size: number;
}

export interface FileState {
  mtimeMs: number;
  size: number;
}

type Statement = Database.Statement;

const KNOWN_LIMIT = 64;

export interface WriteOptions {
  /**
   * The caller's open transaction (or savepoint) holds this write and is rolled back whole if it fails
   * (a rebuild, a group commit): no savepoint of its own (see writingInBulk).
   */
  inCallersTransaction?: boolean;
}

/** A file the index skipped or doubts, and why. */
export interface Problem {
  reason: string;
  /** For an id found in two files: the other document (shown to administrators only). */
  other?: string;
}

export interface TakenBlock {
  id: string;
  /** The document whose row it was. */
  from: string;
}

interface PreviousRow {
  id: string;
  fingerprint: string;
  parent_id: string | null;
  sort: number;
  /** For the document block, remembered in memory only: what its rows hold besides updated and updatedBy. */
  indexed?: string | undefined;
  /** The writeDocument pass that last found this block in its document. */
  seen?: number;
}

/** Everything of a block its index rows are made from, but `updated` and `updatedBy` (columns of its own). */
function indexedPrint(block: Block): string {
  const attrs = Object.keys(block.attrs).filter((name) => name !== 'updated' && name !== 'updatedBy').sort().map((name) => [name, block.attrs[name]]);
  return JSON.stringify([block.type, block.subtype ?? null, block.content ?? null, block.checked ?? null, block.start ?? null, attrs]);
}

/**
 * The SQLite mirror of data/. Each write applies one document's rows in one transaction and touches
 * only the blocks whose fingerprint changed.
 */
export class BlockIndex {
  private readonly statements: Record<string, Statement>;
  private readonly fts: FtsWriter;
  /** Blocks the last writeDocument took over from another document (a move, or an id found twice). */
  private taken: TakenBlock[] = [];
  /** Tells listeners (semantic search) which blocks committed writes touched. */
  private readonly feed: IndexChangeFeed;

  /**
   * `db` writes (and reads what it is about to change); `reader` answers the actions' queries from
   * the last committed state.
   */
  constructor(readonly db: Db, readonly reader: Db) {
    const p = (sql: string): Statement => db.prepare(sql);
    const r = (sql: string): Statement => reader.prepare(sql);
    this.fts = new FtsWriter(db);
    this.feed = new IndexChangeFeed(() => db.inTransaction, changeMarkBump(db));
    this.statements = {
      previousRows: p('SELECT id, fingerprint, parent_id, sort FROM blocks WHERE root_id = ?'),
      previousPlace: p('SELECT notebook, path, hpath FROM documents WHERE id = ?'),
      movePlace: p('UPDATE blocks SET notebook = ?, path = ?, hpath = ? WHERE root_id = ?'),
      moveDocumentRow: p('UPDATE documents SET notebook = ?, parent_doc = ?, path = ?, hpath = ? WHERE id = ?'),
      moveBlock: p('UPDATE blocks SET parent_id = ?, sort = ? WHERE id = ?'),
      touchDocumentBlock: p('UPDATE blocks SET updated = ?, updated_by = ?, fingerprint = ? WHERE id = ?'),
      insertBlock: p(`INSERT OR IGNORE INTO blocks (id, parent_id, root_id, notebook, path, hpath, type, subtype, content, markdown, sort, created, updated, updated_by, fingerprint, checked)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      upsertBlock: p(`INSERT INTO blocks (id, parent_id, root_id, notebook, path, hpath, type, subtype, content, markdown, sort, created, updated, updated_by, fingerprint, checked)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, root_id = excluded.root_id, notebook = excluded.notebook,
          path = excluded.path, hpath = excluded.hpath, type = excluded.type, subtype = excluded.subtype, content = excluded.content,
          markdown = excluded.markdown, sort = excluded.sort, created = excluded.created, updated = excluded.updated,
          updated_by = excluded.updated_by, fingerprint = excluded.fingerprint, checked = excluded.checked
        RETURNING rowid`),
      deleteBlockIn: p('DELETE FROM blocks WHERE id = ? AND root_id = ? RETURNING rowid'),
      deleteAttrs: p('DELETE FROM attributes WHERE block_id = ?'),
      deleteRefs: p('DELETE FROM refs WHERE block_id = ?'),
      deleteTags: p('DELETE FROM tags WHERE block_id = ?'),
      insertAttr: p('INSERT INTO attributes (block_id, root_id, name, value) VALUES (?, ?, ?, ?)'),
      insertRef: p('INSERT INTO refs (block_id, ordinal, root_id, def_block_id, anchor) VALUES (?, ?, ?, ?, ?)'),
      insertTag: p('INSERT OR IGNORE INTO tags (block_id, tag, root_id) VALUES (?, ?, ?)'),
      upsertDocument: p(`INSERT OR REPLACE INTO documents (id, notebook, parent_doc, path, hpath, title, mtime_ms, size)
        VALUES (@id, @notebook, @parent_doc, @path, @hpath, @title, @mtime_ms, @size)`),
      deleteDocument: p('DELETE FROM documents WHERE id = ?'),
      deleteBlocksOf: p('DELETE FROM blocks WHERE root_id = ? RETURNING rowid, id'),
      deleteAttrsOf: p('DELETE FROM attributes WHERE root_id = ?'),
      deleteRefsOf: p('DELETE FROM refs WHERE root_id = ?'),
      deleteTagsOf: p('DELETE FROM tags WHERE root_id = ?'),
      upsertNotebook: p('INSERT OR REPLACE INTO notebooks (id, name, icon, sort, access) VALUES (@id, @name, @icon, @sort, @access)'),
      deleteNotebook: p('DELETE FROM notebooks WHERE id = ?'),
      documentIdsIn: p('SELECT id FROM documents WHERE notebook = ?').pluck(),
      document: p('SELECT * FROM documents WHERE id = ?'),
      allDocuments: p('SELECT * FROM documents'),
      notebookIds: p('SELECT id FROM notebooks').pluck(),
      problems: p('SELECT path, reason, other FROM problems'),
      clearProblems: p('DELETE FROM problems'),
      insertProblem: p('INSERT INTO problems (path, reason, other) VALUES (?, ?, ?)'),
      deleteProblem: p('DELETE FROM problems WHERE path = ?'),
      blockPlace: p('SELECT root_id, notebook FROM blocks WHERE id = ?'),
      blockUpdated: r('SELECT updated FROM blocks WHERE id = ?').pluck(),
      readerPlace: r('SELECT root_id, notebook FROM blocks WHERE id = ?'),
    };
  }

  /**
   * A transaction; if it fails, the rows remembered meanwhile may be ahead of the database, so they go.
   * SQLITE_FULL (no room for the write-ahead log) becomes DISK_FULL naming the index.
   */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn)();
    } catch (error) {
      this.known.clear();
      throw diskFull(error, { what: 'index', file: 'index/quire.db' });
    }
  }

  /**
   * Mirrors one document file: its documents row, then only the blocks that changed. A block whose own
   * fingerprint is unchanged but which moved among its siblings gets its position updated, nothing more.
   */
  writeDocument(root: Block, place: DocumentPlace, parentDoc: string | null, file: FileState, options: WriteOptions = {}): TakenBlock[] {
    const s = this.statements;
    this.taken = [];
    const write = (): void => {
      const before = s.previousPlace!.get(root.id) as DocumentPlace | undefined;
      s.upsertDocument!.run({ id: root.id, notebook: place.notebook, parent_doc: parentDoc, path: place.path, hpath: place.hpath, title: root.content ?? '', mtime_ms: Math.trunc(file.mtimeMs), size: file.size });
      if (before && (before.notebook !== place.notebook || before.path !== place.path || before.hpath !== place.hpath)) {
        s.movePlace!.run(place.notebook, place.path, place.hpath, root.id);
        this.fts.refreshDocument(root.id);
        this.feed.document(root.id);
      }
      // Taken out while it is consumed: if this transaction fails, the next save reads the rows back.
      const remembered = this.known.get(root.id);
      this.known.delete(root.id);
      const previous = remembered ?? new Map((s.previousRows!.all(root.id) as PreviousRow[]).map((row) => [row.id, row]));
      // The rows are brought up to date in place (they are out of `known` until the write ends): one
      // lookup per block, instead of taking each out of `previous` and putting a new one into another map.
      const pass = ++this.passes;
      const visit = (block: Block, parentId: string | null, sort: number): void => {
        const found = previous.get(block.id);
        // An id met a second time in this tree is written again as new, as the first time's row is this pass's.
        const old = found === undefined || found.seen === pass ? undefined : found;
        const fingerprint = ownFingerprint(block);
        if (old === undefined || old.fingerprint !== fingerprint) {
          // The document block changes with every write, usually only its `updated`: then only those
          // columns change, not its text, attributes or full-text row.
          const indexed = block === root ? indexedPrint(block) : undefined;
          if (old?.indexed !== undefined && old.indexed === indexed) s.touchDocumentBlock!.run(block.attrs.updated ?? null, block.attrs.updatedBy ?? null, fingerprint, block.id);
          else this.writeBlock(deriveBlock(block, root.id, parentId, sort, place), old !== undefined);
          previous.set(block.id, { id: block.id, fingerprint, parent_id: parentId, sort, indexed, seen: pass });
        } else {
          if (old.parent_id !== parentId || old.sort !== sort) {
            s.moveBlock!.run(parentId, sort, block.id);
            old.parent_id = parentId;
            old.sort = sort;
          }
          old.indexed = undefined;
          old.seen = pass;
        }
        const children = block.children;
        if (children) for (let i = 0; i < children.length; i++) visit(children[i]!, block.id, i);
      };
      visit(root, null, 0);
      for (const [id, row] of previous) {
        if (row.seen === pass) continue;
        this.deleteBlock(id, root.id);
        previous.delete(id);
      }
      this.remember(root.id, previous);
    };
    // Without a savepoint of its own only inside a transaction that is rolled back whole if this fails.
    if (this.db.inTransaction && (options.inCallersTransaction === true || this.bulkDocuments.has(root.id))) write();
    else this.transaction(write);
    return this.taken;
  }

  /**
   * Documents written in bulk (the chunks of an import) whose writes run inside one transaction opened
   * for all of them, which a failure rolls back whole: their writeDocument opens no savepoint of its own.
   * A savepoint makes the full-text table flush its pending terms to a segment of its own, so a savepoint
   * per document of 100 blocks wrote a hundred times more, smaller segments, which then had to be merged.
   */
  async writingInBulk<T>(ids: readonly string[], work: () => Promise<T>): Promise<T> {
    for (const id of ids) this.bulkDocuments.add(id);
    try {
      return await work();
    } finally {
      for (const id of ids) this.bulkDocuments.delete(id);
    }
  }

  private readonly bulkDocuments = new Set<string>();

  /**
   * New documents whose rows an import's workers derived (import-rows.ts), written in one transaction
   * (the caller's, if open), rolled back whole if one fails: inserts only, no reading back nor comparing.
   */
  writePrepared(docs: readonly { doc: PreparedRows; place: DocumentPlace; parentDoc: string | null; file: FileState }[]): void {
    this.bulk ??= new BulkWriter(this.db);
    const bulk = this.bulk;
    const write = (): void => {
      for (const { doc, place, parentDoc, file } of docs) {
        this.known.delete(doc.id);
        bulk.write(doc, place, parentDoc, file);
        this.feed.document(doc.id);
      }
    };
    if (this.db.inTransaction) write();
    else this.transaction(write);
  }

  private bulk: BulkWriter | undefined;

  /**
   * What the index holds for recently written documents, so that saving one again need not read its
   * rows back. Every change to these tables goes through this class, which keeps it in step.
   */
  private readonly known = new Map<string, Map<string, PreviousRow>>();
  private passes = 0;

  private remember(rootId: string, rows: Map<string, PreviousRow>): void {
    this.known.delete(rootId);
    this.known.set(rootId, rows);
    if (this.known.size > KNOWN_LIMIT) this.known.delete(this.known.keys().next().value!);
  }

  /** After a rolled-back transaction the remembered rows may be ahead of the database. */
  forgetKnown(): void {
    this.known.clear();
  }

  private writeBlock(derived: DerivedBlock, existed: boolean): void {
    const s = this.statements;
    const { row } = derived;
    this.feed.upsert(row.id);
    // Positional parameters: binding sixteen named ones costs more than the insert on a large import.
    const values = [row.id, row.parent_id, row.root_id, row.notebook, row.path, row.hpath, row.type, row.subtype, row.content,
      row.markdown, row.sort, row.created, row.updated, row.updated_by, row.fingerprint, row.checked];
    // A block new to this document may still have rows from the document it came from (a move):
    // those are replaced, never added to.
    const inserted = existed ? undefined : s.insertBlock!.run(...values);
    if (inserted && inserted.changes > 0) {
      this.fts.write(inserted.lastInsertRowid, { ...row, attrs: derived.attrs, tags: derived.tags }, false);
    } else {
      const owner = existed ? undefined : (s.blockPlace!.get(row.id) as { root_id: string } | undefined)?.root_id;
      if (owner !== undefined && owner !== row.root_id) this.taken.push({ id: row.id, from: owner });
      const { rowid } = s.upsertBlock!.get(...values) as { rowid: number };
      this.deleteBlockExtras(row.id);
      this.fts.write(rowid, { ...row, attrs: derived.attrs, tags: derived.tags }, true);
    }
    for (const [name, value] of derived.attrs) s.insertAttr!.run(row.id, row.root_id, name, value);
    derived.refs.forEach((ref, i) => s.insertRef!.run(row.id, i, row.root_id, ref.def, ref.anchor));
    for (const tag of derived.tags) s.insertTag!.run(row.id, tag, row.root_id);
  }

  private deleteBlock(id: string, rootId: string): void {
    // A block that moved to another document now belongs to that document's rows: leave it alone.
    const gone = this.statements.deleteBlockIn!.get(id, rootId) as { rowid: number } | undefined;
    if (gone) {
      this.feed.remove(id);
      this.deleteBlockExtras(id);
      this.fts.delete(gone.rowid);
    }
  }

  private deleteBlockExtras(id: string): void {
    this.statements.deleteAttrs!.run(id);
    this.statements.deleteRefs!.run(id);
    this.statements.deleteTags!.run(id);
  }

  /** A document's rows follow it to another place; its content (and so its blocks' rows) is unchanged. */
  movePlace(id: string, place: DocumentPlace, parentDoc: string | null): void {
    this.statements.moveDocumentRow!.run(place.notebook, parentDoc, place.path, place.hpath, id);
    this.statements.movePlace!.run(place.notebook, place.path, place.hpath, id);
    this.fts.refreshDocument(id);
    this.feed.document(id);
  }

  removeDocument(id: string): void {
    const s = this.statements;
    this.known.delete(id);
    this.transaction(() => {
      s.deleteDocument!.run(id);
      for (const gone of s.deleteBlocksOf!.all(id) as { rowid: number; id: string }[]) {
        this.fts.delete(gone.rowid);
        this.feed.remove(gone.id);
      }
      s.deleteAttrsOf!.run(id);
      s.deleteRefsOf!.run(id);
      s.deleteTagsOf!.run(id);
    });
  }

  writeNotebook(id: string, conf: NotebookConf): void {
    this.statements.upsertNotebook!.run({ id, name: conf.name, icon: conf.icon, sort: conf.sort, access: conf.access });
    this.feed.notebook(id);
  }

  removeNotebook(id: string): void {
    this.transaction(() => {
      for (const doc of this.statements.documentIdsIn!.all(id) as string[]) this.removeDocument(doc);
      this.statements.deleteNotebook!.run(id);
    });
    this.feed.notebook(id);
  }

  /** Problems are kept in the index too, so that one found in a file not re-read since is not forgotten. */
  problems(): Map<string, Problem> {
    const rows = this.statements.problems!.all() as { path: string; reason: string; other: string | null }[];
    return new Map(rows.map((row) => [row.path, row.other === null ? { reason: row.reason } : { reason: row.reason, other: row.other }]));
  }

  replaceProblems(problems: ReadonlyMap<string, Problem>): void {
    this.transaction(() => {
      this.statements.clearProblems!.run();
      for (const [path, problem] of problems) this.statements.insertProblem!.run(path, problem.reason, problem.other ?? null);
    });
  }

  deleteProblem(path: string): void {
    this.statements.deleteProblem!.run(path);
  }

  notebookIds(): string[] {
    return this.statements.notebookIds!.all() as string[];
  }

  document(id: string): DocumentRecord | undefined {
    return this.statements.document!.get(id) as DocumentRecord | undefined;
  }

  allDocuments(): DocumentRecord[] {
    return this.statements.allDocuments!.all() as DocumentRecord[];
  }

  /** The document (and notebook) a block lives in, by the index. */
  placeOf(blockId: string): { root_id: string; notebook: string } | undefined {
    return this.statements.readerPlace!.get(blockId) as { root_id: string; notebook: string } | undefined;
  }

  /** A block's `updated` as indexed, without reading its file. */
  updatedOf(id: string): string | null {
    return (this.statements.blockUpdated!.get(id) as string | null | undefined) ?? null;
  }

  clear(): void {
    this.known.clear();
    clearIndex(this.db);
    this.feed.clear();
  }

  /** Calls `listener` after writes committed (never inside one), with what they touched; returns the unsubscribe. */
  onIndexed(listener: IndexChangeListener): () => void {
    return this.feed.listen(listener);
  }

  /** A transaction opened outside the index's helpers (a sync's) has ended: its changes are reported now. */
  transactionEnded(): void { this.feed.settle(); }

  /** Whether a write is open, or committed and not yet reported to onIndexed listeners. */
  changesUnreported(): boolean {
    return this.feed.pending;
  }
}
