import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import type { Block } from '../../../plugins/blocks/block-model.js';
import { caught } from '../../helpers/harness.js';
import { bareStore, useBlocks } from './blocks-harness.js';

/**
 * A document being created is not listed before its file is written: a caller that lists the notebook
 * meanwhile and asks for what it found must never be told that the document's file is missing (the
 * file is written on the thread pool, and a large one or a slow disk leaves the requests in between time).
 */
describe('a document being created', () => {
  const { boot, tempDir } = useBlocks();

  /** A store over a temporary folder with one notebook. */
  async function store() {
    const { store: made, notebook } = await bareStore(await tempDir());
    const doc = (title: string): Block => ({ id: newId(), type: 'document', content: title, attrs: {}, children: [{ id: newId(), type: 'paragraph', content: 'text', attrs: {} }] });
    return { store: made, notebook, doc };
  }

  it('is in the store\'s catalog once its file is written, not before, and not at all if the write fails', async () => {
    const { store: s, notebook, doc } = await store();
    const parent = doc('Parent');
    const writing = s.write(parent, { id: parent.id, notebook, parent: null, title: 'Parent' });
    // The file is being written (on the thread pool): nothing lists the document yet.
    expect(s.catalog.doc(parent.id)).toBeUndefined();
    await writing;
    expect(s.catalog.doc(parent.id)).toMatchObject({ title: 'Parent' });
    expect(existsSync(s.filePath(parent.id))).toBe(true);
    // A file where the parent's folder of child documents must go: the child's write fails.
    await writeFile(s.catalog.childFolder(s.dataDir, parent.id), 'in the way');
    const child = doc('Child');
    expect((await caught(s.write(child, { id: child.id, notebook, parent: parent.id, title: 'Child' }))).message).toMatch(/ENOTDIR|EEXIST|not a directory/i);
    expect(s.catalog.doc(child.id)).toBeUndefined();
    // An import's documents likewise: none of them enters the catalog, and none of their files stays.
    const [first, second] = [doc('First'), doc('Second')];
    const imported = s.createMany([{ root: first, entry: { id: first.id, notebook, parent: null, title: 'First' } }, { root: second, entry: { id: second.id, notebook, parent: parent.id, title: 'Second' } }]);
    expect(s.catalog.doc(first.id)).toBeUndefined();
    await caught(imported);
    expect([s.catalog.doc(first.id), s.catalog.doc(second.id)]).toEqual([undefined, undefined]);
    expect(existsSync(join(s.dataDir, notebook, `${first.id}.json`))).toBe(false);
    // Nor may an import's document take the id of one that exists: its file would be written over.
    const again = doc('Again');
    again.id = parent.id;
    expect((await caught(s.createMany([{ root: again, entry: { id: parent.id, notebook, parent: null, title: 'Again' } }]))).code).toBe('CONFLICT');
    expect(s.catalog.doc(parent.id)).toMatchObject({ title: 'Parent' });
  });

  it('whose index rows cannot be written is not created: out of the catalog, its file gone', async () => {
    const { store: s, notebook, doc } = await store();
    // A real failure of SQLite inside the document's index transaction.
    s.index.db.exec(`CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.title = 'Poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END`);
    const poisoned = doc('Poison');
    expect((await caught(s.write(poisoned, { id: poisoned.id, notebook, parent: null, title: 'Poison' }))).message).toMatch(/poisoned row/);
    expect(s.catalog.doc(poisoned.id)).toBeUndefined();
    expect(existsSync(join(s.dataDir, notebook, `${poisoned.id}.json`))).toBe(false);
    expect(s.index.db.prepare('SELECT count(*) FROM blocks WHERE root_id = ?').pluck().get(poisoned.id)).toBe(0);
    // The next document is written as usual.
    const fine = doc('Fine');
    await s.write(fine, { id: fine.id, notebook, parent: null, title: 'Fine' });
    expect(s.catalog.doc(fine.id)).toMatchObject({ title: 'Fine' });
    expect(s.index.db.prepare('SELECT count(*) FROM blocks WHERE root_id = ?').pluck().get(fine.id)).toBe(2);
  });

  it('is listed only once it can be read, and with its index rows', async () => {
    const { act } = await boot();
    const notebook = (await act<{ id: string }>('notebook_create', { name: 'N' })).id;
    const markdown = Array.from({ length: 1500 }, (_, i) => `Paragraph ${i} of a long document, 读书 写作 and some more words to fill it.`).join('\n\n');
    const failures: string[] = [];
    let listsWhileCreating = 0;
    for (let round = 0; round < 5; round++) {
      let created = false;
      const creating = act<{ id: string }>('document_create', { notebook, title: `Long ${round}`, markdown }).finally(() => { created = true; });
      const known = new Set<string>();
      while (!created) {
        // Requests arrive between turns of the event loop (a loop of calls answered from memory alone would starve the file write).
        await new Promise((resolve) => setImmediate(resolve));
        const listed = await act<{ documents: { id: string; updated: string | null }[] }>('document_list', { notebook });
        if (!created) listsWhileCreating++;
        for (const { id, updated } of listed.documents) {
          // Listed with its index rows: a listing in between showed it without its time of change.
          if (updated === null) failures.push(`${id}: listed with updated null`);
          if (known.has(id)) continue;
          await act('document_info', { id }).then(() => known.add(id), (error: Error) => failures.push(`${id}: ${error.message}`));
        }
      }
      await creating;
    }
    expect(failures).toEqual([]);
    // Not a test of nothing: the notebook was listed while documents were being created.
    expect(listsWhileCreating).toBeGreaterThan(0);
  });

  it('by an import is listed only once it can be read, its child documents too', async () => {
    const { act } = await boot();
    const notebook = (await act<{ id: string }>('notebook_create', { name: 'N' })).id;
    const folder = await tempDir('quire-visible-');
    const body = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} with words, 读书 写作.`).join('\n\n');
    for (let i = 0; i < 150; i++) {
      await writeFile(join(folder, `Note ${i}.md`), `# Note ${i}\n\n${body}\n`);
      if (i % 10 === 0) {
        await mkdir(join(folder, `Note ${i}`));
        await writeFile(join(folder, `Note ${i}`, 'Child.md'), body);
      }
    }
    const failures: string[] = [];
    let listsWhileImporting = 0;
    let imported = false;
    const importing = act('import_markdown', { notebook, path: folder }).finally(() => { imported = true; });
    const known = new Set<string>();
    while (!imported) {
      await new Promise((resolve) => setImmediate(resolve));
      const top = await act<{ documents: { id: string; childDocuments: number }[] }>('document_list', { notebook });
      if (!imported) listsWhileImporting++;
      const listed = [...top.documents];
      for (const doc of top.documents) {
        if (doc.childDocuments > 0) listed.push(...(await act<{ documents: { id: string; childDocuments: number }[] }>('document_list', { notebook, parentId: doc.id })).documents);
      }
      for (const { id } of listed) {
        if (known.has(id)) continue;
        await act('document_info', { id }).then(() => known.add(id), (error: Error) => failures.push(`${id}: ${error.message}`));
      }
    }
    await importing;
    expect(failures).toEqual([]);
    expect(listsWhileImporting).toBeGreaterThan(0);
    expect((await act<{ documents: unknown[] }>('document_list', { notebook })).documents).toHaveLength(150);
  });
});
