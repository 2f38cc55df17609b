import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImportJournal, importedText, undoInterruptedImports } from '../../../plugins/blocks/import-undo.js';

describe('undoing an import a crash cut short', () => {
  const folders: string[] = [];
  afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }); });

  it('removes the folder made for a document\'s children when the kill came before the document itself was written', async () => {
    const root = await mkdtemp(join(tmpdir(), 'quire-import-undo-'));
    folders.push(root);
    const data = join(root, 'data');
    const notebook = '20261203100000-notebk1';
    const parent = '20261203100001-parentd';
    const child = '20261203100002-childdc';
    const childText = '{"id":"20261203100002-childdc","type":"document","attrs":{},"children":[]}';
    // The step records both; the kill came after the child's file (in its parent's folder), before the parent's.
    await mkdir(join(data, notebook, parent), { recursive: true });
    await writeFile(join(data, notebook, parent, `${child}.json`), childText);
    const journal = new ImportJournal(join(root, 'journal'));
    const id = journal.begin();
    await journal.step(id, 0, { source: '/somewhere/vault', files: [{ path: `${notebook}/${parent}.json`, sha256: 'f'.repeat(64) }, importedText(`${notebook}/${parent}/${child}.json`, childText)] });
    const undone = await undoInterruptedImports(data, journal);
    expect([undone.removed, undone.notFound]).toEqual([[`${notebook}/${parent}/${child}.json`], 1]);
    // Left behind, the empty folder read as children of a missing document at the next sync or rebuild.
    expect(await readdir(join(data, notebook))).toEqual([]);
  });
});
