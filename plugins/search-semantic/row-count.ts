import type Database from 'better-sqlite3';

/**
 * Counts of `block_embeddings` kept by triggers, so that the status need not count rows on the event
 * loop: `count(*)` reads an index entry of every row (15-30 ms at 1M warm, 2.4 s from a cold disk), and
 * the rows to do were read whole at every status call while a large workspace was being embedded
 * (100-200 ms with a million to do).
 * - row_count: every row. Rows are only ever added by INSERT and taken by DELETE (never INSERT OR
 *   REPLACE, whose implicit delete fires no trigger).
 * - todo_count: the rows to do (ok = 0, not ignored), and those of them that failed at least once.
 * The update trigger fires only for a row whose part in the counts changes: a reindex or a change of
 * model updates every row, most of them to do before and after.
 * Dropping the table drops its triggers (a migration, a reset of another version): the next open finds
 * them gone, creates them again and counts once.
 */
const INSERT_TRIGGER = 'block_embeddings_counted_insert';
const DELETE_TRIGGER = 'block_embeddings_counted_delete';
const TODO_TRIGGERS = ['block_embeddings_todo_insert', 'block_embeddings_todo_delete', 'block_embeddings_todo_changed'] as const;
/** Triggers of development builds, dropped when the current ones are made. */
const OLD_TRIGGERS = ['block_embeddings_todo_update'];

/** A row to do, as 0 or 1 (never NULL, which would make the count NULL) for the row `row` (NEW or OLD). */
const todo = (row: 'NEW' | 'OLD'): string => `coalesce(${row}.ok = 0 AND ${row}.ignored IS NULL, 0)`;
const failed = (row: 'NEW' | 'OLD'): string => `coalesce(${row}.ok = 0 AND ${row}.ignored IS NULL AND ${row}.fail_count > 0, 0)`;

export function installRowCount(db: Database.Database): void {
  const triggers = [INSERT_TRIGGER, DELETE_TRIGGER, ...TODO_TRIGGERS];
  const present = db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (${triggers.map(() => '?').join(', ')})`).pluck().get(...triggers) as number;
  const table = (name: string): boolean => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined
    && db.prepare(`SELECT 1 FROM ${name} WHERE id = 1`).get() !== undefined;
  if (present === triggers.length && table('row_count') && table('todo_count')) return;
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS row_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS todo_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL, failed INTEGER NOT NULL);
      ${[...triggers, ...OLD_TRIGGERS].map((name) => `DROP TRIGGER IF EXISTS ${name};`).join('\n')}
      CREATE TRIGGER ${INSERT_TRIGGER} AFTER INSERT ON block_embeddings BEGIN UPDATE row_count SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER ${DELETE_TRIGGER} AFTER DELETE ON block_embeddings BEGIN UPDATE row_count SET n = n - 1 WHERE id = 1; END;
      CREATE TRIGGER ${TODO_TRIGGERS[0]} AFTER INSERT ON block_embeddings WHEN ${todo('NEW')}
        BEGIN UPDATE todo_count SET n = n + 1, failed = failed + ${failed('NEW')} WHERE id = 1; END;
      CREATE TRIGGER ${TODO_TRIGGERS[1]} AFTER DELETE ON block_embeddings WHEN ${todo('OLD')}
        BEGIN UPDATE todo_count SET n = n - 1, failed = failed - ${failed('OLD')} WHERE id = 1; END;
      CREATE TRIGGER ${TODO_TRIGGERS[2]} AFTER UPDATE OF ok, ignored, fail_count ON block_embeddings
        WHEN ${todo('OLD')} != ${todo('NEW')} OR ${failed('OLD')} != ${failed('NEW')}
        BEGIN UPDATE todo_count SET n = n + ${todo('NEW')} - ${todo('OLD')}, failed = failed + ${failed('NEW')} - ${failed('OLD')} WHERE id = 1; END;
      INSERT OR REPLACE INTO row_count (id, n) VALUES (1, (SELECT count(*) FROM block_embeddings));
      INSERT OR REPLACE INTO todo_count (id, n, failed) VALUES (1,
        (SELECT count(*) FROM block_embeddings WHERE ok = 0 AND ignored IS NULL),
        (SELECT count(*) FROM block_embeddings WHERE ok = 0 AND ignored IS NULL AND fail_count > 0));`);
  })();
}

export function countedRows(db: Database.Database): number {
  return db.prepare('SELECT n FROM row_count WHERE id = 1').pluck().get() as number;
}

/** The rows to do, and those of them that failed at least once. */
export function countedTodo(db: Database.Database): { n: number; failed: number } {
  return db.prepare('SELECT n, failed FROM todo_count WHERE id = 1').get() as { n: number; failed: number };
}
