import type { Db } from './index-schema.js';

/**
 * The blocks' change mark: `<instance>:<count>`, where the count goes up with every block row added,
 * deleted, or changed in its text, type or place, and the instance is new for a new or emptied index.
 * Triggers keep it, so no write path (a sync, an import, a move, a rollback, another kernel version)
 * can change a block without changing the mark; a transaction rolled back takes its counts back with
 * it. Two equal marks of one file therefore mean the same blocks. Plugins that derive state from
 * the blocks (search-semantic's store) record the mark when they stop cleanly, and skip comparing
 * every block at the next start when it has not moved (a read of the whole table: 8-38 s at 1M).
 *
 * Notebook rows are left out: a sync writes each of them at every start. What a plugin derives from
 * notebooks (the local-only flag) it compares itself.
 */
const NEW_INSTANCE = 'lower(hex(randomblob(8)))';

const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS change_mark_insert AFTER INSERT ON blocks BEGIN UPDATE change_mark SET count = count + 1; END;
CREATE TRIGGER IF NOT EXISTS change_mark_delete AFTER DELETE ON blocks BEGIN UPDATE change_mark SET count = count + 1; END;
CREATE TRIGGER IF NOT EXISTS change_mark_update AFTER UPDATE ON blocks
  WHEN OLD.id IS NOT NEW.id OR OLD.content IS NOT NEW.content OR OLD.type IS NOT NEW.type OR OLD.notebook IS NOT NEW.notebook
    OR OLD.path IS NOT NEW.path OR OLD.hpath IS NOT NEW.hpath OR OLD.root_id IS NOT NEW.root_id
  BEGIN UPDATE change_mark SET count = count + 1; END;`;

const DROP_TRIGGERS = `
DROP TRIGGER IF EXISTS change_mark_insert;
DROP TRIGGER IF EXISTS change_mark_delete;
DROP TRIGGER IF EXISTS change_mark_update;`;

/** Creates the mark and its triggers where they are missing (an index made before them gets them at open). */
export function installChangeMark(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS change_mark (id INTEGER PRIMARY KEY CHECK (id = 1), instance TEXT NOT NULL, count INTEGER NOT NULL);
    INSERT OR IGNORE INTO change_mark (id, instance, count) VALUES (1, ${NEW_INSTANCE}, 0);
    ${TRIGGERS}`);
}

/**
 * Empties `blocks` under a new instance. The triggers are dropped meanwhile: with a trigger on it,
 * SQLite deletes a table row by row instead of dropping its pages at once.
 */
export function clearBlocksWithNewMark(db: Db): void {
  // A transaction of its own (a savepoint inside the caller's): the rows and the mark go together.
  db.transaction(() => db.exec(`${DROP_TRIGGERS}
    DELETE FROM blocks;
    UPDATE change_mark SET instance = ${NEW_INSTANCE}, count = 0;
    ${TRIGGERS}`))();
}

/** The mark as `connection` sees it (a reader: the last committed state). */
export function readChangeMark(connection: Db): string {
  const row = connection.prepare('SELECT instance, count FROM change_mark WHERE id = 1').get() as { instance: string; count: number } | undefined;
  if (!row) throw new Error('the blocks index has no change mark (opened without installChangeMark)');
  return `${row.instance}:${row.count}`;
}
