import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { dumpIndex, useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }

async function sampleNotes(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'Notes', access: 'published' });
  const top = await act<Created>('document_create', { notebook: notebook.id, title: 'Top', markdown: '# Top\n\nText with #tag/nested# and more.\n\n> quoted\n' });
  const child = await act<Created>('document_create', { notebook: notebook.id, title: 'Child', parentId: top.id, markdown: `See ((${top.id} "top")).\n\n- [ ] task\n` });
  await act('attr_set', { id: child.id, attrs: { 'custom-colour': 'red', memo: 'a memo' } });
  return { notebook: notebook.id, top: top.id, child: child.id };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  // Bounded polling for the watcher, which reports on its own schedule.
  for (let i = 0; i < 100; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the SQLite index', () => {
  it('is reproduced exactly by index rebuild', async () => {
    const { kernel, act } = await boot();
    await sampleNotes(act);
    await sampleNotes(act);
    const before = dumpIndex(kernel.workspace.root);
    expect(before.blocks!.length).toBeGreaterThan(10);
    expect(before.refs!.length).toBe(2);
    const report = await act<{ documents: number; problems: unknown[] }>('index_rebuild', {});
    expect(report).toMatchObject({ documents: 4, problems: [] });
    expect(dumpIndex(kernel.workspace.root)).toEqual(before);
  });

  it('is rebuilt from data/ when the index file is deleted', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    await sampleNotes(first.act);
    const before = dumpIndex(workspace);
    await first.kernel.close();
    await rm(join(workspace, 'index'), { recursive: true });
    const second = await boot({ workspace });
    await second.act('notebook_list', {});
    expect(dumpIndex(workspace)).toEqual(before);
  });

  it('picks up a document edited by hand at start-up', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { notebook, top } = await sampleNotes(first.act);
    await first.kernel.close();
    const file = join(workspace, 'data', notebook, `${top}.json`);
    const root = JSON.parse(await readFile(file, 'utf8'));
    root.children[1].content = 'Edited by hand #handmade#';
    await writeFile(file, JSON.stringify(root, null, 2));
    const second = await boot({ workspace });
    const tagged = await second.act<{ blocks: { id: string }[] }>('tag_blocks', { tag: 'handmade' });
    expect(tagged.blocks.map((block) => block.id)).toEqual([root.children[1].id]);
  });

  it('reports a file that does not parse, skips it and leaves it on disk', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { notebook, top } = await sampleNotes(first.act);
    await first.kernel.close();
    const broken = join(workspace, 'data', notebook, '20250101000000-brokenn.json');
    await writeFile(broken, '{ "id": "20250101000000-brokenn", "type": "document", ');
    const second = await boot({ workspace });
    const { problems } = await second.act<{ problems: { path: string; reason: string }[] }>('index_problems', {});
    expect(problems).toEqual([{ path: `${notebook}/20250101000000-brokenn.json`, reason: expect.stringContaining('not valid JSON') }]);
    expect(await readFile(broken, 'utf8')).toContain('brokenn');
    expect((await caught(second.act('document_get', { id: '20250101000000-brokenn' }))).code).toBe('WORKSPACE_INVALID');
    expect((await second.act<{ document: { id: string } }>('document_get', { id: top })).document.id).toBe(top);
  });

  it('picks up, while serving, a document added and one changed by hand', async () => {
    const { kernel, act } = await boot({ watch: true });
    const { notebook, top } = await sampleNotes(act);
    const file = join(kernel.workspace.dataDir, notebook, `${top}.json`);
    const root = JSON.parse(await readFile(file, 'utf8'));
    root.children[1].content = 'Now about #watched#';
    await writeFile(file, JSON.stringify(root, null, 2));
    const added = { id: '20250102030405-handadd', type: 'document', content: 'Added by hand', attrs: {}, children: [{ id: '20250102030405-handpar', type: 'paragraph', content: 'fresh #watched#', attrs: {} }] };
    await mkdir(join(kernel.workspace.dataDir, notebook), { recursive: true });
    await writeFile(join(kernel.workspace.dataDir, notebook, `${added.id}.json`), JSON.stringify(added));
    const found = await waitFor(async () => {
      const { blocks } = await act<{ blocks: { id: string }[] }>('tag_blocks', { tag: 'watched' });
      return blocks.length === 2 ? blocks.map((block) => block.id).sort() : undefined;
    }, 'the watcher');
    expect(found).toEqual([root.children[1].id, '20250102030405-handpar'].sort());
  });

  it('keeps child documents\' hpath in step when a parent is renamed, as a rebuild would', async () => {
    const { kernel, act } = await boot();
    const { top, child } = await sampleNotes(act);
    await act('document_rename', { id: top, title: 'Renamed' });
    expect((await act<{ hpath: string }>('document_info', { id: child })).hpath).toBe('/Renamed/Child');
    const before = dumpIndex(kernel.workspace.root);
    expect(before.blocks!.filter((row) => (row as { root_id: string }).root_id === child).map((row) => (row as { hpath: string }).hpath)).toContain('/Renamed/Child');
    await act('index_rebuild', {});
    expect(dumpIndex(kernel.workspace.root)).toEqual(before);
  });

  it('forgets, at start-up, a notebook whose folder was removed by hand', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { notebook } = await sampleNotes(first.act);
    const kept = await first.act<Created>('notebook_create', { name: 'Kept' });
    await first.kernel.close();
    await rm(join(workspace, 'data', notebook), { recursive: true });
    const second = await boot({ workspace });
    expect((await second.act<{ notebooks: { id: string }[] }>('notebook_list', {})).notebooks.map((nb) => nb.id)).toEqual([kept.id]);
    const dump = dumpIndex(workspace);
    expect(dump.notebooks!.map((row) => (row as { id: string }).id)).toEqual([kept.id]);
    expect(dump.blocks).toEqual([]);
  });
});
