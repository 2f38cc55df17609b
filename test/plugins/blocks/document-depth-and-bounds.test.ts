import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { useBlocks, type Act } from './blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }

/** Half of a character beyond the 16-bit range (what a cut inside an emoji leaves). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A chain of `count` documents, each below the one before; their ids, the top one first. */
async function chain(act: Act, notebook: string, count: number, name: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await act<Created>('document_create', { notebook, title: `${name} ${i}`, ...(i > 0 ? { parentId: ids[i - 1] } : {}) })).id);
  }
  return ids;
}

describe('documents nest at most 32 deep', () => {
  it('refuses a document or a move that would nest deeper, before writing anything, and takes one that fits', async () => {
    const { act, kernel } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Deep' });
    const deep = await chain(act, notebook.id, 32, 'level');
    // One more below the 32nd: refused, naming the limit (at about 175 the file's path passed the system's
    // limit: ENAMETOOLONG with the absolute path, and a move made the deepest unreadable).
    const below = await caught(act('document_create', { notebook: notebook.id, parentId: deep[31], title: 'too deep' }));
    expect([below.code, below.message, below.details?.field]).toEqual(['INVALID_INPUT', expect.stringContaining('Documents nest at most 32 deep; this would make one 33 deep'), 'parentId']);
    // A document with one below it, moved under the 31st: its child would be 33 deep.
    const pair = await chain(act, notebook.id, 2, 'pair');
    const before = await readdir(kernel.workspace.dataDir, { recursive: true });
    const moved = await caught(act('document_move', { id: pair[0], notebook: notebook.id, parentId: deep[30] }));
    expect([moved.code, moved.details?.depth]).toEqual(['INVALID_INPUT', 33]);
    expect(await readdir(kernel.workspace.dataDir, { recursive: true })).toEqual(before);
    // Under the 30th, both fit (31 and 32 deep), and read.
    await act('document_move', { id: pair[0], notebook: notebook.id, parentId: deep[29] });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: pair[1] })).markdown).toBeDefined();
  });
});

describe('documents nest at most 32 deep: what is there already, and imports', () => {
  it('keeps a document already deeper (made by hand, an older version) writable, and refuses a deep import before writing anything', async () => {
    const first = await boot();
    const notebook = await first.act<Created>('notebook_create', { name: 'Deep' });
    const deep = await chain(first.act, notebook.id, 32, 'level');
    const extra = await first.act<Created>('document_create', { notebook: notebook.id, title: 'extra', markdown: 'hello' });
    const dataDir = first.kernel.workspace.dataDir;
    const files = await readdir(dataDir, { recursive: true });
    const extraFile = files.find((file) => file.endsWith(`${extra.id}.json`))!;
    const lastFile = files.find((file) => file.endsWith(`${deep[31]}.json`))!;
    const workspace = first.kernel.workspace.root;
    await first.kernel.close();
    // Moved by hand below the 32nd: 33 deep. Every write to it was refused "this would make one 33 deep".
    const below = join(dataDir, lastFile.replace(/\.json$/, ''));
    await mkdir(below, { recursive: true });
    await rename(join(dataDir, extraFile), join(below, `${extra.id}.json`));
    const { act } = await boot({ workspace });
    await act('block_append', { parentId: extra.id, markdown: 'more' });
    await act('document_rename', { id: extra.id, title: 'renamed' });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: extra.id })).markdown).toContain('more');
    // A folder nested 40 deep beside 70 notes: refused whole, naming it (it stopped half-way, 128 documents kept).
    const source = await mkdtemp(join(tmpdir(), 'quire-deep-import-'));
    try {
      for (let i = 0; i < 70; i++) await writeFile(join(source, `a${String(i).padStart(3, '0')}.md`), `note ${i}`);
      let folder = join(source, 'z');
      for (let i = 0; i < 40; i++) { await mkdir(folder, { recursive: true }); await writeFile(join(folder, 'n.md'), `level ${i}`); folder = join(folder, `d${i}`); }
      const target = await act<Created>('notebook_create', { name: 'Imported' });
      const refused = await caught(act('import_markdown', { notebook: target.id, path: source }));
      expect([refused.code, refused.details?.field, refused.message]).toEqual(['INVALID_INPUT', 'path', expect.stringContaining('would be 33 deep: nothing was imported')]);
      expect((await act<{ documents: unknown[] }>('document_list', { notebook: target.id })).documents).toEqual([]);
      // As an Obsidian vault with an attachment: refused before its attachments are copied (one was left in assets/).
      await mkdir(join(source, '.obsidian'));
      await writeFile(join(source, 'a000.md'), 'see ![[pic.png]]');
      await writeFile(join(source, 'pic.png'), 'not really a picture');
      const vault = await caught(act('import_markdown', { notebook: target.id, path: source, flavor: 'obsidian' }));
      expect([vault.code, vault.message]).toEqual(['INVALID_INPUT', expect.stringContaining('nothing was imported')]);
      expect(await readdir(join(workspace, 'assets')).catch(() => [])).toEqual([]);
    } finally {
      await rm(source, { recursive: true, force: true });
    }
  });
});

describe('listings that are cut say so, and cut between whole characters', () => {
  it('cuts a preview before an emoji, not inside it; says when forward references or tags pass their limit; asks for a long tag', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const text = `${'a'.repeat(199)}😀b`;
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Emoji', markdown: `# ${text}\n\n${text}` });
    const children = await act<{ children: { id: string; preview: string }[] }>('block_get_children', { id: doc.id });
    for (const child of children.children) expect([child.preview, LONE_SURROGATE.test(child.preview)]).toEqual([`${'a'.repeat(199)}…`, false]);
    const info = await act<{ outline: { preview: string }[] }>('document_info', { id: doc.id });
    expect(LONE_SURROGATE.test(info.outline[0]!.preview)).toBe(false);
    // 250 references from one document: 200 listed, and said to be more (they were dropped without a word).
    const target = children.children[1]!.id;
    const refs = await act<Created>('document_create', { notebook: notebook.id, title: 'Refs', markdown: Array.from({ length: 250 }, (_, i) => `see ((${target} "r${i}"))`).join('\n\n') });
    const forward = await act<{ refs: unknown[]; truncated: boolean }>('ref_forward', { id: refs.id });
    expect([forward.refs.length, forward.truncated]).toEqual([200, true]);
    // 1,001 tags: 1,000 listed, said to be more; a tag of 250 characters, listed, can be asked for (200 at most were taken).
    const tags = Array.from({ length: 1_001 }, (_, i) => `#t${String(i).padStart(4, '0')}#`).join(' ');
    await act('document_create', { notebook: notebook.id, title: 'Tags', markdown: `${tags}\n\na #${'x'.repeat(250)}# b` });
    const listed = await act<{ tags: { tag: string }[]; truncated: boolean }>('tag_list', {});
    expect([listed.tags.length, listed.truncated]).toEqual([1_000, true]);
    expect((await act<{ tags: { tag: string }[] }>('tag_list', { prefix: 'x' })).tags.map((entry) => entry.tag)).toEqual(['x'.repeat(250)]);
    expect((await act<{ blocks: unknown[] }>('tag_blocks', { tag: 'x'.repeat(250) })).blocks).toHaveLength(1);
  });
});
