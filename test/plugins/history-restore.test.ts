import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryStore } from '../../plugins/history/history-store.js';
import { caught } from '../helpers/harness.js';
import { agent, useBlocks } from './blocks/blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Versions { versions: { version: string; op: string }[] }

describe('restoring a removed document from its history', () => {
  it('puts a sub-document back under its parent wherever that is now, and says what to do when the parent is gone', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const other = await act<Created>('notebook_create', { name: 'Other' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent', markdown: 'parent text' });
    const child = await act<Created>('document_create', { notebook: notebook.id, parentId: parent.id, title: 'Child', markdown: 'child text' });
    await act('document_remove', { id: child.id });
    await act('document_move', { id: parent.id, notebook: other.id });
    const removed = (await act<Versions>('history_list', { id: child.id })).versions[0]!;
    // Written at its old path it was in no document's folder: "restored", and neither found nor read.
    const restored = await act<{ restored: string }>('history_rollback', { id: child.id, version: removed.version });
    expect(restored.restored).toBe(`${other.id}/${parent.id}/${child.id}.json`);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: child.id })).markdown).toContain('child text');
    expect((await act<{ documents: { id: string }[] }>('document_list', { notebook: other.id, parentId: parent.id })).documents.map((doc) => doc.id)).toEqual([child.id]);

    // The parent removed too: the child waits for it, or goes to the top of a notebook given.
    await act('document_remove', { id: parent.id });
    const removedAgain = (await act<Versions>('history_list', { id: child.id })).versions.find((version) => version.op === 'remove')!;
    const refused = await caught(act('history_rollback', { id: child.id, version: removedAgain.version }));
    expect([refused.code, refused.message]).toEqual(['CONFLICT', expect.stringContaining(`the document this one was under (${parent.id}) is gone: restore that one first`)]);
    const top = await act<{ restored: string }>('history_rollback', { id: child.id, version: removedAgain.version, notebook: notebook.id });
    expect(top.restored).toBe(`${notebook.id}/${child.id}.json`);
    expect((await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents.map((doc) => doc.id)).toEqual([child.id]);
    // A document that is there is restored where it is.
    const wrong = await caught(act('history_rollback', { id: child.id, version: removedAgain.version, notebook: other.id }));
    expect([wrong.code, wrong.message]).toEqual(['INVALID_INPUT', expect.stringContaining(`is in notebook '${notebook.id}': it is restored where it is`)]);
  });

  it("says that a removed notebook is gone (it said 'no such version'), and restores into another notebook given", async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Gone' });
    const kept = await act<Created>('notebook_create', { name: 'Kept' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Plan', markdown: 'the plan' });
    await act('notebook_remove', { id: notebook.id });
    const removed = (await act<Versions>('history_list', { id: doc.id })).versions[0]!;
    const refused = await caught(act('history_rollback', { id: doc.id, version: removed.version }));
    expect([refused.code, refused.message]).toEqual(['CONFLICT', expect.stringContaining(`the notebook of this version (${notebook.id}) no longer exists: give notebook`)]);
    const missing = await caught(act('history_rollback', { id: doc.id, version: removed.version, notebook: notebook.id }));
    expect([missing.code, missing.message]).toEqual(['NOT_FOUND', expect.stringContaining(`No notebook '${notebook.id}'`)]);
    expect((await act<{ restored: string }>('history_rollback', { id: doc.id, version: removed.version, notebook: kept.id })).restored).toBe(`${kept.id}/${doc.id}.json`);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).toContain('the plan');
  });
});

describe('restoring a version whose blocks moved away since', () => {
  it('puts such a block back under a new id, so no block is in two documents, and says which', async () => {
    // Every change keeps a version (none coalesced), so the state before each move is there to restore.
    const { act } = await boot({ config: { plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const from = await act<Created>('document_create', { notebook: notebook.id, title: 'From', markdown: 'para one\n\nsecret moved para' });
    const to = await act<Created>('document_create', { notebook: notebook.id, title: 'To', markdown: 'already here' });
    const children = (await act<{ document: { children: { id: string; content?: string }[] } }>('document_get', { id: from.id })).document.children;
    const moved = children[1]!.id;
    await act('block_move', { id: moved, parentId: to.id });
    const versions = (await act<Versions>('history_list', { id: from.id })).versions;
    let before: string | undefined;
    for (const { version } of versions) if ((await act<{ text: string }>('history_get', { id: from.id, version })).text.includes('secret moved para')) before ??= version;
    const restored = await act<{ renewed?: { id: string; was: string; in: string }[] }>('history_rollback', { id: from.id, version: before! });
    expect(restored.renewed).toEqual([{ id: expect.any(String), was: moved, in: to.id }]);
    expect((await act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    // Both are there and each can be reached by its id: the moved one where it went, its copy back where it was.
    expect((await act<{ markdown: string }>('document_get_markdown', { id: from.id })).markdown).toContain('secret moved para');
    expect((await act<{ markdown: string }>('block_get', { id: moved })).markdown).toContain('secret moved para');
    expect((await act<{ markdown: string }>('block_get', { id: restored.renewed![0]!.id })).markdown).toContain('secret moved para');

    // Moved into a notebook closed to the agent: renewed for it too, without naming where it went.
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    const hidden = await act<Created>('document_create', { notebook: closed.id, title: 'Hidden', markdown: 'hidden text' });
    const again = (await act<{ document: { children: { id: string }[] } }>('document_get', { id: from.id })).document.children.at(-1)!.id;
    await act('block_move', { id: again, parentId: hidden.id });
    await act('notebook_set_privacy', { id: closed.id, agent: 'none' });
    let withIt: string | undefined;
    for (const { version } of (await act<Versions>('history_list', { id: from.id })).versions) {
      if ((await act<{ text: string }>('history_get', { id: from.id, version })).text.includes(again)) withIt ??= version;
    }
    const asAgent = await act<{ renewed?: { id: string; was?: string; in?: string }[] }>('history_rollback', { id: from.id, version: withIt! }, agent());
    expect(asAgent.renewed).toEqual([{ id: expect.any(String) }]);
    expect(JSON.stringify(asAgent)).not.toContain(hidden.id);
    expect(JSON.stringify(asAgent)).not.toContain(again);
  });
});

describe('restoring as the agent', () => {
  it('treats a parent in a notebook closed to it as gone, and may restore into a notebook it may write what was removed from one it may only read', async () => {
    const { act } = await boot();
    const open = await act<Created>('notebook_create', { name: 'Open' });
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    const readOnly = await act<Created>('notebook_create', { name: 'Read only' });
    const parent = await act<Created>('document_create', { notebook: open.id, title: 'Parent', markdown: 'p' });
    const child = await act<Created>('document_create', { notebook: open.id, parentId: parent.id, title: 'Child', markdown: 'c' });
    await act('document_remove', { id: child.id });
    await act('document_move', { id: parent.id, notebook: closed.id });
    await act('notebook_set_privacy', { id: closed.id, agent: 'none' });
    const removed = (await act<Versions>('history_list', { id: child.id })).versions[0]!;
    // Told apart from a parent that is gone, "no such version" said where the parent was.
    const refused = await caught(act('history_rollback', { id: child.id, version: removed.version }, agent()));
    expect([refused.code, refused.message]).toEqual(['CONFLICT', expect.stringContaining(`the document this one was under (${parent.id}) is gone`)]);

    const note = await act<Created>('document_create', { notebook: readOnly.id, title: 'Kept', markdown: 'kept text' });
    await act('notebook_set_privacy', { id: readOnly.id, agent: 'read' });
    await act('document_remove', { id: note.id });
    const gone = (await act<Versions>('history_list', { id: note.id })).versions[0]!;
    expect((await caught(act('history_rollback', { id: note.id, version: gone.version }, agent()))).code).toBe('ACTION_DENIED');
    // Into a notebook it may write, nothing of the read-only one is changed.
    expect((await act<{ restored: string }>('history_rollback', { id: note.id, version: gone.version, notebook: open.id }, agent())).restored).toBe(`${open.id}/${note.id}.json`);
  });
});

describe('searching the history', () => {
  it("looks in the notes' words, not in the file's JSON", async () => {
    const { act } = await boot({ config: { plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Talk', markdown: 'He said "hello" to me, **bold** word' });
    await act('block_append', { parentId: doc.id, markdown: 'later' });
    const found = async (query: string) => (await act<{ results: unknown[] }>('history_search', { query })).results.length;
    // A quoted word was escaped in the JSON, and every version held "paragraph" and "children".
    expect([await found('said "hello"'), await found('paragraph'), await found('children'), await found('talk'), await found('bold word'), await found('**bold**')]).toEqual([1, 0, 0, 1, 1, 1]);
  });
});

describe('the retention rules', () => {
  it("drop expired versions of every document, not only of one written again, and the folder of one left with none", async () => {
    const folder = join(await tempDir(), 'history');
    const store = new HistoryStore(folder, { maxVersions: 100, maxAgeDays: 90 });
    const version = { op: 'remove' as const, by: 'person:alice', notebook: '20260101000000-aaaaaaa', path: '20260101000000-aaaaaaa/20260101000000-bbbbbbb.json', hpath: '/Gone', text: '{"content":"Gone","children":[]}' };
    const long = new Date(Date.now() - 200 * 86_400_000);
    await store.record({ ...version, documentId: '20260101000000-bbbbbbb' }, long);
    await store.record({ ...version, documentId: '20260101000000-ccccccc' }, long);
    await store.record({ ...version, documentId: '20260101000000-ccccccc' }, new Date());
    expect(await store.documents()).toHaveLength(2);
    expect(await store.pruneAll(new Date())).toEqual({ documents: 2, stopped: false });
    expect(await store.documents()).toEqual(['20260101000000-ccccccc']);
    expect((await store.list('20260101000000-ccccccc')).map((kept) => kept.op)).toEqual(['remove']);
    // A stop is asked before each document.
    await mkdir(join(folder, '20260101000000-ddddddd'));
    await writeFile(join(folder, '20260101000000-ddddddd', 'x'), '');
    expect(await store.pruneAll(new Date(), () => true)).toEqual({ documents: 0, stopped: true });
    expect(await readdir(folder)).toHaveLength(2);
  });
});
