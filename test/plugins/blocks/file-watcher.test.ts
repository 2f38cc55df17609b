import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBlocks, type Act } from './blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }

/** Bounded polling for the watcher, which reports on its own schedule. */
async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const tagged = async (act: Act, tag: string): Promise<string[]> => (await act<{ blocks: { id: string }[] }>('tag_blocks', { tag })).blocks.map((block) => block.id).sort();
const documentFile = (id: string, text: string) => JSON.stringify({ id, type: 'document', content: `Doc ${id}`, attrs: {},
  children: [{ id: id.replace(/.......$/, 'para000'), type: 'paragraph', content: text, attrs: {} }] });

describe('the data folder watcher', () => {
  it('sees hand edits in folders below the notebooks, in folders made while serving, and removals', async () => {
    const { kernel, act } = await boot({ watch: true });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const top = await act<Created>('document_create', { notebook: notebook.id, title: 'Top', markdown: 'top' });
    const child = await act<Created>('document_create', { notebook: notebook.id, title: 'Child', parentId: top.id, markdown: 'child' });
    const data = kernel.workspace.dataDir;

    // A child document's file, in a folder that existed at start-up, edited by hand.
    const childFile = join(data, notebook.id, top.id, `${child.id}.json`);
    const root = JSON.parse(await readFile(childFile, 'utf8'));
    root.children[0].content = 'edited #deep#';
    await writeFile(childFile, JSON.stringify(root));
    expect(await waitFor(async () => ((await tagged(act, 'deep')).length === 1 ? 'seen' : undefined), 'an edit two folders down')).toBe('seen');

    // A grandchild written into a folder made after start-up.
    const grandchild = '20250102030405-grandch';
    await mkdir(join(data, notebook.id, top.id, child.id));
    await writeFile(join(data, notebook.id, top.id, child.id, `${grandchild}.json`), documentFile(grandchild, 'new #fresh#'));
    expect(await waitFor(async () => ((await tagged(act, 'fresh')).length === 1 ? 'seen' : undefined), 'a document in a new folder')).toBe('seen');

    // A whole notebook copied in by hand, then a document added to it, then the notebook removed.
    const other = '20250102030405-othernb';
    await mkdir(join(data, other));
    await writeFile(join(data, other, '.notebook.json'), JSON.stringify({ name: 'Other', icon: '', sort: 9, access: 'private' }));
    await writeFile(join(data, other, '20250102030406-otherd1.json'), documentFile('20250102030406-otherd1', 'one #copied#'));
    expect(await waitFor(async () => ((await tagged(act, 'copied')).length === 1 ? 'seen' : undefined), 'a new notebook')).toBe('seen');
    await writeFile(join(data, other, '20250102030407-otherd2.json'), documentFile('20250102030407-otherd2', 'two #copied#'));
    expect(await waitFor(async () => ((await tagged(act, 'copied')).length === 2 ? 'seen' : undefined), 'a document in the new notebook')).toBe('seen');
    await rm(join(data, other), { recursive: true });
    expect(await waitFor(async () => ((await tagged(act, 'copied')).length === 0 ? 'gone' : undefined), 'a notebook removed by hand')).toBe('gone');

    // The kernel's own writes still land as before, and a hand edit after all of this is still seen.
    await act('document_create', { notebook: notebook.id, title: 'Later', markdown: 'later #own#' });
    expect(await tagged(act, 'own')).toHaveLength(1);
    await writeFile(join(data, notebook.id, '20250102030408-lastone.json'), documentFile('20250102030408-lastone', 'last #final#'));
    expect(await waitFor(async () => ((await tagged(act, 'final')).length === 1 ? 'seen' : undefined), 'a later hand edit')).toBe('seen');
  });
});
