import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBlocks } from './blocks-harness.js';

/**
 * A document being created is not listed before its file is written: a caller that lists the notebook
 * meanwhile and asks for what it found must never be told that the document's file is missing (the
 * file is written on the thread pool, and a large one or a slow disk leaves the requests in between time).
 */
describe('a document being created', () => {
  const { boot, tempDir } = useBlocks();

  it('is listed only once it can be read', async () => {
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
        const listed = await act<{ documents: { id: string }[] }>('document_list', { notebook });
        if (!created) listsWhileCreating++;
        for (const { id } of listed.documents) {
          if (known.has(id)) continue;
          await act('document_info', { id }).then(() => known.add(id), (error: Error) => failures.push(`${id}: ${error.message}`));
        }
      }
      await creating;
    }
    expect(failures).toEqual([]);
    // The window was there to be hit: the notebook was listed while documents were being created.
    expect(listsWhileCreating).toBeGreaterThan(5);
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
    expect(listsWhileImporting).toBeGreaterThan(5);
    expect((await act<{ documents: unknown[] }>('document_list', { notebook })).documents).toHaveLength(150);
  });
});
