import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { FTS_TABLE, tuneFts } from './fts-index.js';
import { clearBlocksWithNewMark, installChangeMark } from './change-mark.js';

export type Db = Database.Database;

/** Bumped when the tables change; an index of another version is rebuilt from data/. */
export const INDEX_SCHEMA_VERSION = '8';

/**
 * The derived index (DESIGN.md §3). Everything here is reproduced from data/ by a rebuild, so the
 * tables hold no fact that the files do not. `blocks` keeps an implicit rowid for the FTS table that
 * search-fulltext attaches later; writes use upserts so that rowids stay put.
 */
const TABLES = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notebooks (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, icon TEXT NOT NULL, sort INTEGER NOT NULL, access TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS documents (
  id TEXT PRIMARY KEY, notebook TEXT NOT NULL, parent_doc TEXT, path TEXT NOT NULL, hpath TEXT NOT NULL,
  title TEXT NOT NULL, mtime_ms INTEGER NOT NULL, size INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (
  id TEXT NOT NULL UNIQUE, parent_id TEXT, root_id TEXT NOT NULL, notebook TEXT NOT NULL, path TEXT NOT NULL,
  hpath TEXT NOT NULL, type TEXT NOT NULL, subtype TEXT, content TEXT NOT NULL, markdown TEXT,
  sort INTEGER NOT NULL, created TEXT, updated TEXT, updated_by TEXT, fingerprint TEXT NOT NULL, checked INTEGER
);
CREATE INDEX IF NOT EXISTS blocks_root ON blocks (root_id);
CREATE INDEX IF NOT EXISTS blocks_parent ON blocks (parent_id, sort);
CREATE INDEX IF NOT EXISTS blocks_updated_by ON blocks (updated_by);
CREATE TABLE IF NOT EXISTS attributes (
  block_id TEXT NOT NULL, root_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (block_id, name)
) WITHOUT ROWID;
-- created, updated and updatedBy live in blocks' columns; this table holds every other attribute.
CREATE INDEX IF NOT EXISTS attributes_name ON attributes (name, value);
CREATE TABLE IF NOT EXISTS refs (
  block_id TEXT NOT NULL, ordinal INTEGER NOT NULL, root_id TEXT NOT NULL, def_block_id TEXT NOT NULL, anchor TEXT,
  PRIMARY KEY (block_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS refs_def ON refs (def_block_id);
CREATE TABLE IF NOT EXISTS tags (
  block_id TEXT NOT NULL, tag TEXT NOT NULL, root_id TEXT NOT NULL, PRIMARY KEY (block_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tags_tag ON tags (tag);
CREATE TABLE IF NOT EXISTS problems (path TEXT PRIMARY KEY, reason TEXT NOT NULL, other TEXT) WITHOUT ROWID;
${FTS_TABLE}`;

export const INDEX_TABLES: readonly string[] = ['notebooks', 'documents', 'blocks', 'attributes', 'refs', 'tags', 'problems'];

/**
 * A second, read-only connection for the actions' queries. With WAL it sees the last committed state:
 * never a rebuild or a sync half done in the writer's open transaction.
 */
export function openIndexReader(file: string): Db {
  const reader = new Database(file, { readonly: true, fileMustExist: true });
  reader.pragma('query_only = ON');
  sizeCaches(reader);
  return reader;
}

/**
 * The reader reads through a memory map (no system call and copy per page: full-text queries at 1M
 * blocks about 7% faster warm) and both connections keep a page cache that holds the hot b-tree levels
 * of a large index: with the default 2 MiB cache, every hit a search looks up at a million blocks was a
 * read() of its page. SQLite maps only as much of the file as exists, up to this bound, so a small index
 * costs nothing; the pages are the OS's file cache, shared, not this process's heap.
 *
 * The writer maps nothing. A fault in a mapped file that is not cached reads the whole readahead window
 * around it (4 MiB on the machine measured), so the start's sync, which reads scattered rows of a cold
 * index, read hundreds of MiB: `SELECT * FROM documents` (2,000 rows) took 7.1 s from a cold disk mapped
 * against 0.1 s through read(), which was most of a cold start at 1M blocks. Its other reads are the rows
 * of the document being written, which the page cache holds.
 */
const MMAP_BYTES = 4 * 2 ** 30;
const CACHE_KIB = 64 * 1024;

function sizeCaches(db: Db, mapped = true): void {
  db.pragma(`mmap_size = ${mapped ? MMAP_BYTES : 0}`);
  db.pragma(`cache_size = -${CACHE_KIB}`);
}

/** Opens (creating if needed) the index database in WAL mode; reports whether it must be rebuilt. */
export function openIndexDatabase(file: string): { db: Db; fresh: boolean } {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // The index is derived: a crash may lose the last transactions, and start-up sync redoes them from data/.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  sizeCaches(db, false);
  const version = hasMeta(db) ? (db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('schema') as string | undefined) : undefined;
  if (version !== undefined && version !== INDEX_SCHEMA_VERSION) {
    // An index of another schema is rebuilt from data/ in a new file: dropping its tables kept their
    // pages (1.5 GiB at a million blocks) as free space in the file, and took seconds of the start.
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    return openIndexDatabase(file);
  }
  db.exec(TABLES);
  installChangeMark(db);
  tuneFts(db);
  const fresh = version !== INDEX_SCHEMA_VERSION;
  if (fresh) db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run('schema', INDEX_SCHEMA_VERSION);
  return { db, fresh };
}

function hasMeta(db: Db): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
}


/** Empties every derived table (the start of a rebuild), keeping the schema and rowid sequence. */
export function clearIndex(db: Db): void {
  for (const table of INDEX_TABLES) {
    if (table === 'blocks') clearBlocksWithNewMark(db);
    else db.exec(`DELETE FROM ${table}`);
  }
  db.exec("INSERT INTO blocks_fts (blocks_fts) VALUES ('delete-all')");
  db.exec('DELETE FROM block_docs');
}
