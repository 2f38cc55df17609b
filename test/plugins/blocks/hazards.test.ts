import { mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../core/paths.js';
import { caught } from '../../helpers/harness.js';
import { agent, dumpIndex, reader, useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Tree { document: { children: { id: string; content?: string }[] } }

async function twoDocuments(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const a = await act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: 'moving\n\nstays\n' });
  const b = await act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: 'target\n' });
  const [moving] = (await act<Tree>('document_get', { id: a.id })).document.children;
  const [target] = (await act<Tree>('document_get', { id: b.id })).document.children;
  return { notebook: notebook.id, a: a.id, b: b.id, moving: moving!.id, target: target!.id };
}

describe('moving blocks between documents', () => {
  it('moves a block with attributes, references and tags into exactly one file, and the index matches a rebuild', async () => {
    const { kernel, act } = await boot();
    const { notebook, a, b, moving, target } = await twoDocuments(act);
    await act('block_update', { id: moving, markdown: `moving #t# ((${target} "there"))` });
    await act('attr_set', { id: moving, attrs: { 'custom-colour': 'red' } });
    await act('block_move', { id: moving, previousId: target });
    const inA = (await readFile(join(kernel.workspace.dataDir, notebook, `${a}.json`), 'utf8')).includes(moving);
    const inB = (await readFile(join(kernel.workspace.dataDir, notebook, `${b}.json`), 'utf8')).includes(moving);
    expect([inA, inB]).toEqual([false, true]);
    const before = dumpIndex(kernel.workspace.root);
    expect(before.attributes).toEqual([expect.objectContaining({ block_id: moving, root_id: b, name: 'custom-colour' })]);
    expect(before.refs).toEqual([expect.objectContaining({ block_id: moving, root_id: b })]);
    await act('index_rebuild', {});
    expect(dumpIndex(kernel.workspace.root)).toEqual(before);
  });

  it('reports a block id found in two files instead of failing the start', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { notebook, a, moving } = await twoDocuments(first.act);
    // The whole document is copied by hand under another id: every block id is now in two files.
    await first.act('attr_set', { id: moving, attrs: { 'custom-x': '1' } });
    await first.kernel.close();
    const original = JSON.parse(await readFile(join(workspace, 'data', notebook, `${a}.json`), 'utf8'));
    const copy = { ...original, id: '20250101000000-copyaaa' };
    await writeFile(join(workspace, 'data', notebook, `${copy.id}.json`), JSON.stringify(copy));
    const second = await boot({ workspace });
    const { problems } = await second.act<{ problems: { path: string; reason: string }[] }>('index_problems', {});
    expect(problems).toEqual([expect.objectContaining({ reason: expect.stringMatching(/^block \S+ also appears in another document/), otherDocument: expect.any(String) })]);
    // Still reported after a restart, although the file is not read again.
    await second.kernel.close();
    const third = await boot({ workspace });
    expect((await third.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual(problems);
    expect((await third.act<{ notebooks: unknown[] }>('notebook_list', {})).notebooks).toHaveLength(1);
  });
});

describe('a document file copied with its id', () => {
  it('keeps the file it knows, reports the copy in another notebook or in its own folder, and renames without looping', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { notebook, a } = await twoDocuments(first.act);
    const other = await first.act<{ id: string }>('notebook_create', { name: 'Other' });
    await first.kernel.close();
    const text = await readFile(join(workspace, 'data', notebook, `${a}.json`), 'utf8');
    // A sync tool's copy in another notebook, and a copy inside the document's own folder (its own child).
    await writeFile(join(workspace, 'data', other.id, `${a}.json`), text);
    // ... with a document of its own inside the copy's folder: it belongs to the copy, not to the kept A.
    const inside = '20250101000000-insidea';
    await mkdir(join(workspace, 'data', other.id, a), { recursive: true });
    await writeFile(join(workspace, 'data', other.id, a, `${inside}.json`), JSON.stringify({ id: inside, type: 'document', content: 'Inside', attrs: {}, children: [] }));
    await mkdir(join(workspace, 'data', notebook, a), { recursive: true });
    await writeFile(join(workspace, 'data', notebook, a, `${a}.json`), text);
    const second = await boot({ workspace });
    for (let run = 0; run < 2; run++) {
      const { problems } = await second.act<{ problems: { path: string; reason: string }[] }>('index_problems', {});
      expect(problems.map((problem) => problem.path).sort()).toEqual([`${notebook}/${a}/${a}.json`, `${other.id}/${a}.json`, `${other.id}/${a}/${inside}.json`].sort());
      expect(problems.filter((problem) => problem.reason.includes(`the same document id as ${notebook}/${a}.json`))).toHaveLength(2);
      // The same file is kept at every sync, not one then the other.
      expect((await second.act<{ notebook: string }>('document_info', { id: a })).notebook).toBe(notebook);
      await second.act('index_rebuild', {});
    }
    // A rename walks the document's subtree: it must end.
    await second.act('document_rename', { id: a, title: 'Renamed' });
    expect((await second.act<{ title: string }>('document_info', { id: a })).title).toBe('Renamed');
    // A move onto the copy's place does not replace the copy without a word.
    expect((await caught(second.act('document_move', { id: a, notebook: other.id }))).code).toBe('CONFLICT');
    expect(await readFile(join(workspace, 'data', other.id, `${a}.json`), 'utf8')).toBe(text);
  });
});

describe('writes racing removals', () => {
  it('never writes a document into a notebook removed just before', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Doomed' });
    const [removed, created] = await Promise.allSettled([
      act('notebook_remove', { id: notebook.id }),
      act('document_create', { notebook: notebook.id, title: 'Late' }),
    ]);
    expect(removed.status).toBe('fulfilled');
    expect(created.status === 'rejected' ? (created.reason as { code: string }).code : 'created').toBe('NOT_FOUND');
    expect(await readdir(kernel.workspace.dataDir)).toEqual([]);
  });

  it('never moves a document under a parent removed just before', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent' });
    const mover = await act<Created>('document_create', { notebook: notebook.id, title: 'Mover' });
    const [, moved] = await Promise.allSettled([
      act('document_remove', { id: parent.id }),
      act('document_move', { id: mover.id, notebook: notebook.id, parentId: parent.id }),
    ]);
    expect(moved.status === 'rejected' ? (moved.reason as { code: string }).code : 'moved').toBe('NOT_FOUND');
    expect(await readdir(join(kernel.workspace.dataDir, notebook.id))).toEqual(['.notebook.json', `${mover.id}.json`]);
  });

  it('leaves a document where it was, for every reader, when its move cannot be journaled', async () => {
    const { kernel, act } = await boot();
    const from = await act<Created>('notebook_create', { name: 'From' });
    const to = await act<Created>('notebook_create', { name: 'To' });
    const doc = await act<Created>('document_create', { notebook: from.id, title: 'Mover', markdown: 'stays put' });
    // The moves journal cannot be written (a file where its folder goes, as a full disk would refuse it).
    const journal = join(kernel.workspace.privateDir, 'journal', 'moves');
    await rm(journal, { recursive: true, force: true });
    await writeFile(journal, 'not a folder');
    expect((await caught(act('document_move', { id: doc.id, notebook: to.id }))).message).toMatch(/ENOTDIR|not a directory/);
    const listed = async (notebook: string) => (await act<{ documents: { id: string }[] }>('document_list', { notebook })).documents.map((item) => item.id);
    expect([await listed(from.id), await listed(to.id)]).toEqual([[doc.id], []]);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).toContain('stays put');
    await act('document_rename', { id: doc.id, title: 'Still here' });
  });

  it('makes one daily note when two first appends arrive together', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const results = await Promise.all(['one', 'two'].map((text) => act<{ id: string }>('dailynote_append', { notebook: notebook.id, date: '2026-03-04', markdown: text })));
    expect(results[0]!.id).toBe(results[1]!.id);
    const { markdown } = await act<{ markdown: string }>('document_get_markdown', { id: results[0]!.id });
    expect(markdown.trim()).toBe('one\n\ntwo');
  });
});

describe('broken files', () => {
  async function withBrokenChild() {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'Private' });
    const parent = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Parent' });
    await first.kernel.close();
    const broken = join(workspace, 'data', notebook.id, parent.id, '20250101000000-brokenn.json');
    await mkdir(join(workspace, 'data', notebook.id, parent.id), { recursive: true });
    await writeFile(broken, '{ "secret": My salary is 100');
    return { workspace, notebook: notebook.id, parent: parent.id, broken };
  }

  it('never deletes a broken file by removing the document or notebook above it', async () => {
    const { workspace, notebook, parent, broken } = await withBrokenChild();
    const { act } = await boot({ workspace });
    expect((await caught(act('document_remove', { id: parent }))).code).toBe('CONFLICT');
    expect((await caught(act('notebook_remove', { id: notebook }))).code).toBe('CONFLICT');
    expect(await readFile(broken, 'utf8')).toContain('salary');
  });

  it('tells a reader nothing of broken files in private notebooks, and nobody the file\'s text', async () => {
    const { workspace } = await withBrokenChild();
    const { act } = await boot({ workspace });
    expect((await act<{ problems: unknown[] }>('index_problems', {}, reader)).problems).toEqual([]);
    const { problems } = await act<{ problems: { reason: string }[] }>('index_problems', {});
    expect(problems).toHaveLength(1);
    expect(JSON.stringify(problems)).not.toContain('salary');
  });

  it('tells the agent nothing of broken files in a notebook hidden from it, in a rebuild\'s answer as in index_problems', async () => {
    const { workspace, notebook } = await withBrokenChild();
    const { act } = await boot({ workspace });
    await act('notebook_set_privacy', { id: notebook, agent: 'none' });
    const rebuilt = await act<{ problems: { path: string }[] }>('index_rebuild', {}, agent());
    expect(rebuilt.problems).toEqual([]);
    expect((await act<{ problems: unknown[] }>('index_problems', {}, agent())).problems).toEqual([]);
    expect((await act<{ problems: { path: string }[] }>('index_rebuild', {})).problems.map((problem) => problem.path.split('/')[0])).toEqual([notebook]);
  });
});

describe('the gate while the index is built', () => {
  it('never lets an agent call slip past a notebook deny rule while the index is rebuilt from scratch', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'Guarded' });
    const doc = await first.act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'x\n' });
    const [block] = (await first.act<Tree>('document_get', { id: doc.id })).document.children;
    await first.kernel.close();
    await rm(join(workspace, 'index'), { recursive: true });
    const { act } = await boot({ workspace, config: { gate: { allowAutoMode: true, deny: [{ tool: 'block', notebook: notebook.id }] } } });
    const codes = new Set<string>();
    // Until the sync has finished the gate cannot know the block's notebook and says so; then it denies.
    for (const end = Date.now() + 20_000; Date.now() < end && !codes.has('ACTION_DENIED');) {
      codes.add((await caught(act('block_update', { id: block!.id, markdown: 'y' }, agent()))).code ?? 'none');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect([...codes].filter((code) => code !== 'NOT_READY' && code !== 'ACTION_DENIED')).toEqual([]);
    expect(codes.has('ACTION_DENIED')).toBe(true);
  });
});

describe('import and export stay out of the workspace', () => {
  it('refuses to import a file that is not Markdown, or anything inside the workspace', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const folder = await tempDir();
    await writeFile(join(folder, 'id_rsa'), 'PRIVATE KEY');
    expect((await caught(act('import_markdown', { notebook: notebook.id, path: join(folder, 'id_rsa') }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('import_markdown', { notebook: notebook.id, path: kernel.workspace.root }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('import_markdown', { notebook: notebook.id, path: join(kernel.workspace.root, 'agent') }))).code).toBe('INVALID_INPUT');
    const link = join(folder, 'sneaky');
    await symlink(kernel.workspace.root, link);
    expect((await caught(act('import_markdown', { notebook: notebook.id, path: link }))).code).toBe('INVALID_INPUT');
  });

  it('refuses to export into the workspace, also through a link, and writes nothing on a conflict', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'One' });
    await act('document_create', { notebook: notebook.id, title: 'Two' });
    const folder = await tempDir();
    await symlink(kernel.workspace.dataDir, join(folder, 'into-data'));
    expect((await caught(act('export_markdown', { id: notebook.id, folder: join(folder, 'into-data') }))).code).toBe('INVALID_INPUT');
    expect((await caught(act('export_markdown', { id: notebook.id, folder: join(kernel.workspace.root, 'out') }))).code).toBe('INVALID_INPUT');
    const out = join(folder, 'out');
    await mkdir(out);
    await writeFile(join(out, 'Two.md'), 'mine');
    expect((await caught(act('export_markdown', { id: notebook.id, folder: out }))).code).toBe('CONFLICT');
    expect((await readdir(out)).sort()).toEqual(['Two.md']);
    expect(await readFile(join(out, 'Two.md'), 'utf8')).toBe('mine');
  });
});

describe('the same thing asked twice at once', () => {
  it('removes a document and its parent asked at once: the later answers NOT_FOUND, not an internal error', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent' });
    const child = await act<Created>('document_create', { notebook: notebook.id, parentId: parent.id, title: 'Child' });
    const [first, second] = await Promise.all([act('document_remove', { id: parent.id }).catch((error: unknown) => error), act('document_remove', { id: child.id }).catch((error: unknown) => error)]);
    expect(first).toMatchObject({ removed: [parent.id, child.id] });
    expect(second).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('removes a notebook asked twice at once: the later answers NOT_FOUND, not removed', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'One' });
    const answers = await Promise.all([1, 2].map(() => act('notebook_remove', { id: notebook.id }).catch((error: unknown) => error)));
    expect(answers[0]).toMatchObject({ removed: notebook.id, documents: 1 });
    expect(answers[1]).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers each of two attribute changes to one block written together with its own change', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'a paragraph' });
    const block = (await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc.id })).document.children[0]!.id;
    const [a, b] = await Promise.all([act<{ attrs: Record<string, string> }>('attr_set', { id: block, attrs: { 'custom-a': '1' } }), act<{ attrs: Record<string, string> }>('attr_set', { id: block, attrs: { 'custom-b': '2' } })]);
    expect(a.attrs['custom-a']).toBe('1');
    expect(a.attrs['custom-b']).toBeUndefined();
    expect(b.attrs).toMatchObject({ 'custom-a': '1', 'custom-b': '2' });
  });
});

describe('exports that would reach the kernel\'s own files', () => {
  it('refuses to export into the kernel\'s own folder, which its web server hands out without a token', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Private' });
    await act('document_create', { notebook: notebook.id, title: 'Secrets', markdown: 'the safe code is 1234' });
    const served = join(PACKAGE_ROOT, 'dist', 'web', 'assets', `export-${Date.now()}`);
    try {
      expect((await caught(act('export_markdown', { id: notebook.id, folder: served }))).code).toBe('INVALID_INPUT');
      expect(await stat(served).then(() => true, () => false)).toBe(false);
    } finally {
      await rm(served, { recursive: true, force: true });
    }
  });

  it('refuses to copy an Obsidian export\'s attachments through an assets folder that links into the workspace', async () => {
    const { kernel, act } = await boot();
    await mkdir(join(kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'assets', 'pic.png'), 'png bytes');
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Pictures', markdown: '![a picture](assets/pic.png)' });
    const out = await tempDir();
    await symlink(kernel.workspace.dataDir, join(out, 'assets'));
    expect((await caught(act('export_markdown', { id: notebook.id, folder: out, flavor: 'obsidian' }))).code).toBe('INVALID_INPUT');
    expect(await stat(join(kernel.workspace.dataDir, 'pic.png')).then(() => true, () => false)).toBe(false);
    // Refused before any note is written (it was found only after the notes were).
    expect(await readdir(out)).toEqual(['assets']);
    // So is a `.obsidian` folder that links into the workspace.
    await rm(join(out, 'assets'));
    await symlink(kernel.workspace.dataDir, join(out, '.obsidian'));
    expect((await caught(act('export_markdown', { id: notebook.id, folder: out, flavor: 'obsidian' }))).code).toBe('INVALID_INPUT');
    expect(await readdir(out)).toEqual(['.obsidian']);
  });
});

describe('second-round hazards', () => {
  it('lets only one of two crossing document moves through, and the index still matches the files', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const a = await act<Created>('document_create', { notebook: notebook.id, title: 'A' });
    const b = await act<Created>('document_create', { notebook: notebook.id, title: 'B' });
    const results = await Promise.allSettled([
      act('document_move', { id: a.id, notebook: notebook.id, parentId: b.id }),
      act('document_move', { id: b.id, notebook: notebook.id, parentId: a.id }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    expect(((results[1] as PromiseRejectedResult).reason as { code: string }).code).toBe('INVALID_INPUT');
    expect(await readdir(join(kernel.workspace.dataDir, notebook.id, b.id))).toEqual([`${a.id}.json`]);
    const before = dumpIndex(kernel.workspace.root);
    await act('index_rebuild', {});
    expect(dumpIndex(kernel.workspace.root)).toEqual(before);
  });

  it('refuses to move a document whose subtree holds a broken file, and moves nothing', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    const other = await first.act<Created>('notebook_create', { name: 'Other' });
    const parent = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Parent' });
    await first.kernel.close();
    await mkdir(join(workspace, 'data', notebook.id, parent.id));
    await writeFile(join(workspace, 'data', notebook.id, parent.id, '20250101000000-brokenn.json'), '{');
    const { act } = await boot({ workspace });
    expect((await caught(act('document_move', { id: parent.id, notebook: other.id }))).code).toBe('CONFLICT');
    expect((await readdir(join(workspace, 'data', notebook.id))).sort()).toEqual(['.notebook.json', parent.id, `${parent.id}.json`].sort());
  });

  it('does not report an empty folder left where a document\'s children would go', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    await first.kernel.close();
    await mkdir(join(workspace, 'data', notebook.id, '20250101000000-gonegon'));
    const { act } = await boot({ workspace });
    expect((await act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect(await act('notebook_remove', { id: notebook.id })).toMatchObject({ removed: notebook.id });
  });

  it('exports nothing when one of the documents is broken', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Good' });
    const bad = await act<Created>('document_create', { notebook: notebook.id, title: 'Bad' });
    await writeFile(join(kernel.workspace.dataDir, notebook.id, `${bad.id}.json`), '{');
    const out = join(await tempDir(), 'out');
    expect((await caught(act('export_markdown', { id: notebook.id, folder: out }))).code).toBe('INVALID_INPUT');
    expect(await readdir(out).catch(() => [])).toEqual([]);
  });

  it('refuses to import the root of the file system, which holds the workspace', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    expect((await caught(act('import_markdown', { notebook: notebook.id, path: '/' }))).code).toBe('INVALID_INPUT');
  });

  it('answers reads from the last committed index while a rebuild runs', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const folder = await tempDir();
    for (let i = 0; i < 150; i++) await writeFile(join(folder, `n${i}.md`), `text ${i}\n\nmore ${i}\n`);
    await act('import_markdown', { notebook: notebook.id, path: folder });
    const { documents } = await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id });
    const [block] = (await act<Tree>('document_get', { id: documents[0]!.id })).document.children;
    let done = false;
    const rebuild = act('index_rebuild', {}).finally(() => { done = true; });
    let reads = 0;
    while (!done) {
      const got = await act<{ block: { id: string } }>('block_get', { id: block!.id });
      expect(got.block.id).toBe(block!.id);
      reads++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await rebuild;
    expect(reads).toBeGreaterThan(0);
  });
});

