import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import type { Block } from '../../../plugins/blocks/block-model.js';
import { mutateDocument } from '../../../plugins/blocks/mutate.js';
import { caught, useHarness } from '../../helpers/harness.js';
import { bareStore } from './blocks-harness.js';

const caller = { principal: { kind: 'person' as const, name: 'alice', role: 'admin' as const }, callId: 'c1' };

describe('document writes applied together', () => {
  const harness = useHarness();

  /** A store over a temporary folder with one notebook and `count` documents of one paragraph. */
  async function storeWithDocuments(count: number) {
    const { store, db, notebook } = await bareStore(await harness.tempDir());
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const root: Block = { id: newId(), type: 'document', content: `D${i}`, attrs: {}, children: [{ id: newId(), type: 'paragraph', content: 'start', attrs: {} }] };
      await store.write(root, { id: root.id, notebook, parent: null, title: `D${i}` });
      ids.push(root.id);
    }
    const fileContents = async (id: string) => (JSON.parse(await readFile(store.filePath(id), 'utf8')) as Block).children!.map((child) => child.content);
    const indexContents = (id: string) => (db.prepare("SELECT content FROM blocks WHERE root_id = ? AND type = 'paragraph' ORDER BY sort").pluck().all(id) as string[]);
    return { store, db, ids, fileContents, indexContents };
  }

  const append = (content: string) => ({ root }: { root: Block }) => {
    const block: Block = { id: newId(), type: 'paragraph', content, attrs: {} };
    root.children!.push(block);
    return block.id;
  };

  it('leaves nothing of a change that throws after changing the tree, and writes the others of its batch', async () => {
    const { store, ids: [doc], fileContents, indexContents } = await storeWithDocuments(1);
    // Queued in one turn, so they are applied together at one write.
    const first = mutateDocument(store, doc!, caller, append('first'));
    const broken = caught(mutateDocument(store, doc!, caller, ({ root }) => {
      append('half')({ root });
      root.content = 'renamed by a change that then failed';
      throw new Error('refused after changing the tree');
    }));
    const third = mutateDocument(store, doc!, caller, append('third'));
    await Promise.all([first, third]);
    expect((await broken).message).toBe('refused after changing the tree');
    expect(await fileContents(doc!)).toEqual(['start', 'first', 'third']);
    expect(indexContents(doc!)).toEqual(['start', 'first', 'third']);
    const file = JSON.parse(await readFile(store.filePath(doc!), 'utf8')) as Block;
    expect(file.content).toBe('D0');
    // The answers are those of the changes as finally written.
    expect(file.children!.map((child) => child.id).slice(1)).toEqual([await first, await third]);
  });

  it('commits the index writes of documents written together, a failing one rolled back alone and reported behind', async () => {
    const { store, db, ids, fileContents, indexContents } = await storeWithDocuments(6);
    const reports: boolean[] = [];
    store.onIndexWrite = (ok) => reports.push(ok);
    db.exec("CREATE TRIGGER poison BEFORE INSERT ON blocks WHEN NEW.content = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END");
    const outcomes = await Promise.all(ids.map((id, i) => mutateDocument(store, id, caller, append(i === 2 ? 'poison' : `more ${i}`)).then(() => 'ok', (error: Error) => error.message)));
    // The files are the truth: the poisoned document's file took its change, so the change has happened.
    expect(outcomes).toEqual(ids.map(() => 'ok'));
    expect(reports.filter((ok) => !ok)).toHaveLength(1);
    for (const [i, id] of ids.entries()) {
      expect(await fileContents(id)).toEqual(['start', i === 2 ? 'poison' : `more ${i}`]);
      expect(indexContents(id)).toEqual(i === 2 ? ['start'] : ['start', `more ${i}`]);
    }
    // The index of the document that failed is written again with its next change.
    db.exec('DROP TRIGGER poison');
    await mutateDocument(store, ids[2]!, caller, append('after'));
    expect(indexContents(ids[2]!)).toEqual(await fileContents(ids[2]!));
  });
});
