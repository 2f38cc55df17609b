import type Database from 'better-sqlite3';
import type { FileState } from './block-index.js';
import { FtsWriter, idToken, pathTokens } from './fts-index.js';
import type { Db } from './index-schema.js';
import type { DocumentPlace } from './index-rows.js';
import type { PreparedRows } from './import-rows.js';

/**
 * Writes the index rows of new documents prepared on an import's workers (import-rows.ts): only
 * inserts, run with prepared statements, in the caller's transaction. The rows are those
 * BlockIndex.writeDocument would write for a new document (the same deriveBlock and ftsValues made
 * them), so the index after an import still equals a rebuild.
 */
export class BulkWriter {
  private readonly insertBlock: Database.Statement;
  private readonly insertAttr: Database.Statement;
  private readonly insertRef: Database.Statement;
  private readonly insertTag: Database.Statement;
  private readonly insertDocument: Database.Statement;
  private readonly fts: FtsWriter;

  constructor(db: Db) {
    // A plain INSERT: an id already in the index (a clash the import's checks missed) fails the
    // transaction rather than taking another document's block.
    this.insertBlock = db.prepare(`INSERT INTO blocks (id, parent_id, root_id, notebook, path, hpath, type, subtype, content, markdown, sort, created, updated, updated_by, fingerprint, checked)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertAttr = db.prepare('INSERT INTO attributes (block_id, root_id, name, value) VALUES (?, ?, ?, ?)');
    this.insertRef = db.prepare('INSERT INTO refs (block_id, ordinal, root_id, def_block_id, anchor) VALUES (?, ?, ?, ?, ?)');
    this.insertTag = db.prepare('INSERT OR IGNORE INTO tags (block_id, tag, root_id) VALUES (?, ?, ?)');
    this.insertDocument = db.prepare(`INSERT INTO documents (id, notebook, parent_doc, path, hpath, title, mtime_ms, size)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.fts = new FtsWriter(db);
  }

  /** Must run inside a transaction (BlockIndex.writePrepared opens it). */
  write(doc: PreparedRows, place: DocumentPlace, parentDoc: string | null, file: FileState): void {
    const { notebook, path, hpath } = place;
    const rootId = doc.id;
    this.insertDocument.run(rootId, notebook, parentDoc, path, hpath, doc.title, Math.trunc(file.mtimeMs), file.size);
    const notebookToken = idToken(notebook);
    const pathToken = pathTokens(path);
    for (const block of doc.blocks) {
      const [id, parentId, type, subtype, content, markdown, sort, created, updated, updatedBy, fingerprint, checked] = block.values;
      const { lastInsertRowid } = this.insertBlock.run(id, parentId, rootId, notebook, path, hpath, type, subtype, content, markdown, sort, created, updated, updatedBy, fingerprint, checked);
      const fts = block.fts;
      this.fts.writeValues(lastInsertRowid, [fts[0], fts[1], fts[2], fts[3], fts[4], notebookToken, pathToken, type, fts[5]], rootId, notebook);
      if (block.attrs) for (const [name, value] of block.attrs) this.insertAttr.run(id, rootId, name, value);
      if (block.refs) for (let i = 0; i < block.refs.length; i++) this.insertRef.run(id, i, rootId, block.refs[i]![0], block.refs[i]![1]);
      if (block.tags) for (const tag of block.tags) this.insertTag.run(id, tag, rootId);
    }
  }
}
