import Database from 'better-sqlite3';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { BLOCKS_INDEX, type BlocksIndex } from '../../../plugins/blocks/tokens.js';
import { caught } from '../../helpers/harness.js';
import { agent, useBlocks } from './blocks-harness.js';

interface Created { id: string }
interface Inserted { ids: string[]; documentId: string }
interface Tree { document: { children: { id: string; content?: string }[] } }

/**
 * A write whose file is replaced but whose index rows cannot be written (a full disk for the index, a
 * row SQLite refuses): the files are the truth, so the write has happened and says so, and the index
 * catches up; meanwhile the gate does not guess a new block's notebook from rows that are behind.
 */
describe('a write the index could not take', () => {
  const { boot, tempDir } = useBlocks();

  it('answers the write as done, keeps the gate from guessing until a sync catches up, and the index then holds it', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const guarded = await first.act<Created>('notebook_create', { name: 'Guarded' });
    const other = await first.act<Created>('notebook_create', { name: 'Other' });
    const doc = await first.act<Created>('document_create', { notebook: guarded.id, title: 'D', markdown: 'start\n' });
    await first.act('document_create', { notebook: other.id, title: 'E', markdown: 'start\n' });
    await first.kernel.close();
    const { act } = await boot({ workspace, config: { gate: { allowAutoMode: true, deny: [{ tool: 'block', notebook: guarded.id }] } } });
    const [start] = (await act<Tree>('document_get', { id: doc.id })).document.children;

    // Another connection makes the index refuse the new block's row, as a full disk would refuse it.
    const side = new Database(join(workspace, 'index', 'quire.db'));
    side.exec("CREATE TRIGGER refuse BEFORE INSERT ON blocks WHEN NEW.content LIKE '%refused by the index%' BEGIN SELECT RAISE(ABORT, 'no room'); END");
    try {
      const inserted = await act<Inserted>('block_insert', { previousId: start!.id, markdown: 'A line refused by the index.' });
      // The file holds it: a retry would have added it twice.
      const file = await readFile(join(workspace, 'data', guarded.id, `${doc.id}.json`), 'utf8');
      expect(file).toContain(inserted.ids[0]);
      expect((await act<Tree>('document_get', { id: doc.id })).document.children.map((child) => child.content)).toEqual(['start', 'A line refused by the index.']);
      // The index does not know the block's notebook: the call never gets past the deny rule. While the sync
      // runs the gate says so (NOT_READY); once it has (the document a problem, its old rows kept), the block is unknown.
      expect(['NOT_READY', 'NOT_FOUND']).toContain((await caught(act('block_update', { id: inserted.ids[0], markdown: 'changed by the agent' }, agent()))).code);

      // The sync that follows cannot write that document's rows either: it reports the document as a
      // problem and commits the rest, instead of failing whole (and every sync after it) while the gate waits.
      await expect.poll(async () => (await act<{ problems: { path: string; reason: string }[] }>('index_problems', {})).problems, { timeout: 10_000 })
        .toEqual([expect.objectContaining({ path: `${guarded.id}/${doc.id}.json`, reason: expect.stringContaining('could not be written to the index') })]);
      // Its old rows stay, so that its blocks can still be changed by the actions (as below).
      expect((await act<{ total: number }>('search_fulltext', { query: 'start' })).total).toBe(2);

      side.exec('DROP TRIGGER refuse');
      // The document's next write takes it in whole.
      await act('block_insert', { previousId: start!.id, markdown: 'more' });
      await expect.poll(async () => (await act<{ total: number }>('search_fulltext', { query: 'refused' })).total, { timeout: 10_000 }).toBe(1);
      expect((await act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
      expect((await caught(act('block_update', { id: inserted.ids[0], markdown: 'changed by the agent' }, agent()))).code).toBe('ACTION_DENIED');
      expect(await readFile(join(workspace, 'data', guarded.id, `${doc.id}.json`), 'utf8')).not.toContain('changed by the agent');
    } finally {
      side.close();
    }
  });

  it('keeps the gate from guessing while a rollback changes the files and syncs the index', async () => {
    const { kernel, act } = await boot();
    const blocks = kernel.container.resolve<BlocksIndex>(BLOCKS_INDEX);
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => { entered = resolve; });
    // As a snapshot or history rollback: files put back, then the index synced with them.
    const rollback = blocks.withWritesPaused(async ({ syncIndex }) => { entered(); await held; await syncIndex(); }, { changesFiles: true });
    await inside;
    // A block only the restored files may hold: its notebook cannot be known until the sync.
    const block = newId();
    const during = caught(act('block_update', { id: block, markdown: 'x' }, agent()));
    const answered = await Promise.race([during.then((error) => error.code), new Promise((resolve) => setTimeout(() => resolve('still waiting behind the rollback'), 3000))]);
    release();
    await rollback;
    await during;
    expect(answered).toBe('NOT_READY');
    expect((await caught(act('block_update', { id: block, markdown: 'x' }, agent()))).code).toBe('NOT_FOUND');
    // Writes held for work that changes no note (a snapshot taken): the gate goes on as usual.
    let done!: () => void;
    const snapshotting = blocks.withWritesPaused(() => new Promise<void>((resolve) => { done = resolve; }));
    await new Promise((resolve) => setImmediate(resolve));
    expect((await caught(act('block_update', { id: block, markdown: 'x' }, agent()))).code).toBe('NOT_FOUND');
    done();
    await snapshotting;
  });
});
