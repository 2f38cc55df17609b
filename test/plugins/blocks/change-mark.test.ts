import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { readChangeMark } from '../../../plugins/blocks/change-mark.js';
import { clearIndex, openIndexDatabase } from '../../../plugins/blocks/index-schema.js';
import { useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

/** The committed mark, read as another process would. */
function markOf(workspace: string): string {
  const db = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
  try {
    return readChangeMark(db);
  } finally {
    db.close();
  }
}

describe("the blocks' change mark", () => {
  it('moves with every write that adds, changes or removes blocks, and with nothing else', async () => {
    const { kernel, act } = await boot();
    const root = kernel.workspace.root;
    const marks = [markOf(root)];
    const step = async (work: () => Promise<unknown>): Promise<boolean> => {
      await work();
      marks.push(markOf(root));
      return marks.at(-1) !== marks.at(-2);
    };
    const notebook = await act<{ id: string }>('notebook_create', { name: 'N' });
    let doc = { id: '' };
    expect(await step(async () => { doc = await act<{ id: string }>('document_create', { notebook: notebook.id, title: 'T', markdown: 'first text' }); })).toBe(true);
    let added: string[] = [];
    expect(await step(async () => { added = (await act<{ ids: string[] }>('block_append', { parentId: doc.id, markdown: 'an added line' })).ids; })).toBe(true);
    expect(added).toHaveLength(1);
    expect(await step(() => act('block_update', { id: added[0], markdown: 'second text' }))).toBe(true);
    // Reads change nothing.
    expect(await step(() => act('search_fulltext', { query: 'text' }))).toBe(false);
    expect(await step(() => act('document_remove', { id: doc.id }))).toBe(true);
    await kernel.close();
    // A start that finds the files as the index has them writes no block: the mark stays.
    const before = markOf(root);
    const again = await boot({ workspace: root });
    expect(markOf(root)).toBe(before);
    await again.kernel.close();
  });

  it('gets a new instance when the index is emptied (a rebuild starts so), and is kept across opening', async () => {
    const file = join(await tempDir(), 'quire.db');
    const first = openIndexDatabase(file).db;
    const mark = readChangeMark(first);
    first.close();
    const { db } = openIndexDatabase(file);
    try {
      expect(readChangeMark(db)).toBe(mark);
      clearIndex(db);
      const cleared = readChangeMark(db);
      expect(cleared.split(':')[0]).not.toBe(mark.split(':')[0]);
      expect(cleared.split(':')[1]).toBe('0');
    } finally {
      db.close();
    }
  });
});
