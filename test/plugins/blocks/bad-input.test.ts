import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Tree { document: { children: { id: string; type: string; children?: { id: string; children?: { id: string }[] }[] }[] } }

async function setup(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent', markdown: 'para\n\n- item one\n- item two\n' });
  const child = await act<Created>('document_create', { notebook: notebook.id, title: 'Child', parentId: parent.id });
  const grandchild = await act<Created>('document_create', { notebook: notebook.id, title: 'Grandchild', parentId: child.id });
  return { notebook: notebook.id, parent: parent.id, child: child.id, grandchild: grandchild.id };
}

/** A listing of every file under data/ with its content, to prove a refused call changed nothing. */
async function snapshotData(dataDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return out;
}

describe('bad input changes nothing', () => {
  it('refuses malformed ids and path traversal in ids, names and paths with INVALID_INPUT', async () => {
    const { kernel, act } = await boot();
    const { notebook, parent } = await setup(act);
    const before = await snapshotData(kernel.workspace.dataDir);
    const cases: [string, Record<string, unknown>][] = [
      ['document_create', { notebook: '../../etc', title: 'x' }],
      ['document_create', { notebook, title: 'x', parentId: '../20240101120000-abcdefg' }],
      ['block_get', { id: '20240101120000-abcdefg/../../x' }],
      ['block_batch_get', { ids: ['..'] }],
      ['notebook_create', { name: '' }],
      ['notebook_create', { name: 'bad\u0000name' }],
      ['import_markdown', { notebook, path: 'relative/folder' }],
      ['export_markdown', { id: parent, folder: '../outside' }],
      ['export_markdown', { id: parent, folder: kernel.workspace.dataDir }],
      ['attr_set', { id: parent, attrs: { updatedBy: 'someone else' } }],
      ['attr_set', { id: parent, attrs: { __proto__x: 'y' } }],
      ['block_insert', { markdown: 'x', parentId: parent, previousId: parent }],
    ];
    for (const [target, input] of cases) {
      const error = await caught(act(target, input));
      expect([target, error.code]).toEqual([target, 'INVALID_INPUT']);
    }
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
  });

  it('refuses to move a document under its own descendant, and a block under itself', async () => {
    const { kernel, act } = await boot();
    const { notebook, parent, grandchild } = await setup(act);
    const tree = await act<Tree>('document_get', { id: parent });
    const list = tree.document.children.find((block) => block.type === 'list')!;
    const before = await snapshotData(kernel.workspace.dataDir);
    expect((await caught(act('document_move', { id: parent, notebook, parentId: grandchild }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('document_move', { id: parent, notebook, parentId: parent }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('block_move', { id: list.id, parentId: list.children![0]!.id }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('block_move', { id: list.id, previousId: list.id }))).code).toBe('INVALID_INPUT');
    // A leaf holds no children (a block moved into a list goes into a new item of it: documents.test.ts).
    expect((await caught(act('block_move', { id: tree.document.children[0]!.id, parentId: list.children![0]!.children![0]!.id }))).code).toBe('INVALID_INPUT');
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
  });

  it('refuses Markdown over the size limit with PAYLOAD_TOO_LARGE before parsing it', async () => {
    const { kernel, act } = await boot({ maxMarkdownChars: 1000 });
    const { notebook, parent } = await setup(act);
    const before = await snapshotData(kernel.workspace.dataDir);
    const big = 'word '.repeat(300);
    for (const [target, input] of [
      ['document_create', { notebook, title: 'Big', markdown: big }],
      ['block_append', { parentId: parent, markdown: big }],
      ['dailynote_append', { notebook, markdown: big }],
    ] as const) {
      const error = await caught(act(target, input));
      expect(error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(error.details).toMatchObject({ plugin: 'blocks', field: 'markdown', limit: 1000 });
    }
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
  });

  it('refuses to remove a notebook while an import is working in it', async () => {
    const { act } = await boot();
    const { notebook } = await setup(act);
    const folder = await tempDir();
    for (let i = 0; i < 60; i++) await writeFile(join(folder, `note ${i}.md`), `# Note ${i}\n\ntext\n`);
    const importing = act('import_markdown', { notebook, path: folder });
    // The removal is queued behind the import's first document and finds the notebook busy.
    await new Promise((resolve) => setImmediate(resolve));
    const error = await caught(act('notebook_remove', { id: notebook }));
    expect(error.code).toBe('CONFLICT');
    expect((await importing as { documents: number }).documents).toBe(60);
    expect((await act<{ notebooks: { id: string }[] }>('notebook_list', {})).notebooks.map((nb) => nb.id)).toContain(notebook);
  });

  it('reports a document file that is not a valid document, naming the file and the JSON pointer', async () => {
    const { kernel, act } = await boot();
    const { notebook, parent } = await setup(act);
    const file = join(kernel.workspace.dataDir, notebook, `${parent}.json`);
    const root = JSON.parse(await readFile(file, 'utf8'));
    root.children[0].type = 'spaceship';
    await writeFile(file, JSON.stringify(root));
    const error = await caught(act('document_get', { id: parent }));
    // The file is damaged, not the caller's input: a server-side state, named (not 400).
    expect(error.code).toBe('WORKSPACE_INVALID');
    expect(error.details).toMatchObject({ path: `${notebook}/${parent}.json`, issues: [{ pointer: '/children/0/type' }] });
    // In a batch, the blocks of that document are unreadable, and the others are answered.
    const other = await act<{ id: string }>('document_create', { notebook, title: 'Fine', markdown: 'fine text' });
    const batch = await act<{ blocks: { block: { id: string } }[]; missing: string[]; unreadable?: { id: string; message: string }[] }>('block_batch_get', { ids: [other.id, root.children[1]?.id ?? parent, '20200101000000-zzzzzzz'] });
    expect([batch.blocks.map((found) => found.block.id), batch.missing, batch.unreadable?.map((found) => found.id)]).toEqual([[other.id], ['20200101000000-zzzzzzz'], [root.children[1]?.id ?? parent]]);
    expect(batch.unreadable![0]!.message).toContain('is not a valid document');
    expect(await readFile(file, 'utf8')).toContain('spaceship');
  });
});
