import type Database from 'better-sqlite3';

/**
 * The number of rows of `block_embeddings`, kept by triggers, so that the status need not count them:
 * `count(*)` reads an index entry of every row, on the event loop (15-30 ms at 1M warm, 2.4 s from a
 * cold disk). Rows are only ever added by INSERT and taken by DELETE (never INSERT OR REPLACE, whose
 * implicit delete fires no trigger). Dropping the table drops its triggers (a migration, a reset of
 * another version): the next open finds them gone, creates them again and counts once.
 */
const INSERT_TRIGGER = 'block_embeddings_counted_insert';
const DELETE_TRIGGER = 'block_embeddings_counted_delete';

export function installRowCount(db: Database.Database): void {
  const present = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)").pluck().get(INSERT_TRIGGER, DELETE_TRIGGER) as number;
  const counted = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'row_count'").get() !== undefined
    && db.prepare('SELECT 1 FROM row_count WHERE id = 1').get() !== undefined;
  if (present === 2 && counted) return;
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS row_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      DROP TRIGGER IF EXISTS ${INSERT_TRIGGER};
      DROP TRIGGER IF EXISTS ${DELETE_TRIGGER};
      CREATE TRIGGER ${INSERT_TRIGGER} AFTER INSERT ON block_embeddings BEGIN UPDATE row_count SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER ${DELETE_TRIGGER} AFTER DELETE ON block_embeddings BEGIN UPDATE row_count SET n = n - 1 WHERE id = 1; END;
      INSERT OR REPLACE INTO row_count (id, n) VALUES (1, (SELECT count(*) FROM block_embeddings));`);
  })();
}

export function countedRows(db: Database.Database): number {
  return db.prepare('SELECT n FROM row_count WHERE id = 1').pluck().get() as number;
}
