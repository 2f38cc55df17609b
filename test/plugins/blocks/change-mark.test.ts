import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChangeMark } from '../../../plugins/blocks/change-mark.js';
import { clearIndex, openIndexDatabase, openIndexReader, type Db } from '../../../plugins/blocks/index-schema.js';
import { useBlocks } from './blocks-harness.js';

const { tempDir } = useBlocks();

function insertBlock(db: Db, id: string, content: string): void {
  db.prepare(`INSERT INTO blocks (id, parent_id, root_id, notebook, path, hpath, type, content, sort, fingerprint)
    VALUES (?, NULL, 'root', 'nb', 'nb/root.json', '/Root', 'paragraph', ?, 0, 'f')`).run(id, content);
}

describe("the blocks' change mark", () => {
  it('moves with every block added, deleted or changed in text, type or place, and only then', async () => {
    const file = join(await tempDir(), 'quire.db');
    const { db } = openIndexDatabase(file);
    const reader = openIndexReader(file);
    try {
      const marks = [readChangeMark(reader)];
      const step = (work: () => void): boolean => {
        work();
        marks.push(readChangeMark(reader));
        return marks.at(-1) !== marks.at(-2);
      };
      expect(step(() => insertBlock(db, 'a', 'first text'))).toBe(true);
      expect(step(() => db.prepare("UPDATE blocks SET content = 'second text' WHERE id = 'a'").run())).toBe(true);
      expect(step(() => db.prepare("UPDATE blocks SET type = 'heading' WHERE id = 'a'").run())).toBe(true);
      expect(step(() => db.prepare("UPDATE blocks SET hpath = '/Moved' WHERE id = 'a'").run())).toBe(true);
      expect(step(() => db.prepare("UPDATE blocks SET notebook = 'other' WHERE id = 'a'").run())).toBe(true);
      // What the blocks' derived state does not read: position among siblings, the same text written again, notebooks.
      expect(step(() => db.prepare("UPDATE blocks SET sort = 5, fingerprint = 'g' WHERE id = 'a'").run())).toBe(false);
      expect(step(() => db.prepare("UPDATE blocks SET content = 'second text' WHERE id = 'a'").run())).toBe(false);
      expect(step(() => db.prepare("INSERT OR REPLACE INTO notebooks (id, name, icon, sort, access) VALUES ('nb', 'N', '', 0, 'private')").run())).toBe(false);
      // A transaction rolled back takes its count back with it.
      expect(step(() => {
        db.exec('BEGIN');
        insertBlock(db, 'b', 'never committed');
        db.exec('ROLLBACK');
      })).toBe(false);
      expect(step(() => db.prepare("DELETE FROM blocks WHERE id = 'a'").run())).toBe(true);
      // Emptied (a rebuild starts so): a new instance, so the count starting again cannot repeat a mark.
      insertBlock(db, 'c', 'third text');
      const before = readChangeMark(reader);
      clearIndex(db);
      const after = readChangeMark(reader);
      expect(after.split(':')[0]).not.toBe(before.split(':')[0]);
      expect(after.split(':')[1]).toBe('0');
      expect(db.prepare('SELECT count(*) FROM blocks').pluck().get()).toBe(0);
      // The triggers are back after the clear.
      insertBlock(db, 'd', 'fourth text');
      expect(readChangeMark(reader)).not.toBe(after);
    } finally {
      reader.close();
      db.close();
    }
  });

  it('is kept across closing and opening the index', async () => {
    const file = join(await tempDir(), 'quire.db');
    const first = openIndexDatabase(file).db;
    insertBlock(first, 'a', 'some text');
    const mark = readChangeMark(first);
    first.close();
    const again = openIndexDatabase(file).db;
    try {
      expect(readChangeMark(again)).toBe(mark);
    } finally {
      again.close();
    }
  });
});
