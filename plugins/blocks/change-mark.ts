import type { Db } from './index-schema.js';

/**
 * The blocks' change mark: `<instance>:<count>`. The count goes up in the transaction of every write that
 * adds, deletes or changes a block row's text, type or place: BlockIndex bumps it wherever it tells the
 * change feed of one (index-change-feed.ts), which by its contract hears of every committed change, with
 * listeners or without. A transaction rolled back takes its bump back with it; an emptied index gets a new
 * instance. Two equal marks of one file therefore mean the same blocks. Plugins that derive state from
 * the blocks (search-semantic's store) record the mark when they stop cleanly, and skip comparing every
 * block at the next start when it has not moved (a read of the whole table: 8-38 s at 1M).
 *
 * Not kept by triggers: a trigger makes every INSERT keep a statement journal of the pages it changes,
 * which cut an import from 7.4 to 4.2 MB/s and tripled a rebuild (bench/blocks-import.ts, 100k blocks).
 * Notebook rows are left out: a sync writes each of them at every start. What a plugin derives from
 * notebooks (the local-only flag) it compares itself.
 */
const NEW_INSTANCE = 'lower(hex(randomblob(8)))';

/** Creates the mark where it is missing; drops the triggers that kept it in development builds. */
export function installChangeMark(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS change_mark (id INTEGER PRIMARY KEY CHECK (id = 1), instance TEXT NOT NULL, count INTEGER NOT NULL);
    INSERT OR IGNORE INTO change_mark (id, instance, count) VALUES (1, ${NEW_INSTANCE}, 0);
    DROP TRIGGER IF EXISTS change_mark_insert;
    DROP TRIGGER IF EXISTS change_mark_delete;
    DROP TRIGGER IF EXISTS change_mark_update;`);
}

/** Empties `blocks` under a new instance, in a transaction of its own (a savepoint inside the caller's). */
export function clearBlocksWithNewMark(db: Db): void {
  db.transaction(() => db.exec(`DELETE FROM blocks; UPDATE change_mark SET instance = ${NEW_INSTANCE}, count = 0;`))();
}

/** A statement that moves the mark (run inside the write it marks). */
export function changeMarkBump(db: Db): () => void {
  const bump = db.prepare('UPDATE change_mark SET count = count + 1 WHERE id = 1');
  return () => { bump.run(); };
}

/** The mark as `connection` sees it (a reader: the last committed state). */
export function readChangeMark(connection: Db): string {
  const row = connection.prepare('SELECT instance, count FROM change_mark WHERE id = 1').get() as { instance: string; count: number } | undefined;
  if (!row) throw new Error('the blocks index has no change mark (opened without installChangeMark)');
  return `${row.instance}:${row.count}`;
}
