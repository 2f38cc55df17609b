import { readdir } from 'node:fs/promises';
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

describe('listings that are cut say so, and cut between whole characters', () => {
  it('cuts a preview before an emoji, not inside it; says when forward references or tags pass their limit; takes no tag longer than 200', async () => {
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
    // 1,001 tags: 1,000 listed, said to be more; a `#…#` of 250 characters is no tag (listed, it could not be asked for).
    const tags = Array.from({ length: 1_001 }, (_, i) => `#t${String(i).padStart(4, '0')}#`).join(' ');
    await act('document_create', { notebook: notebook.id, title: 'Tags', markdown: `${tags}\n\na #${'x'.repeat(250)}# b` });
    const listed = await act<{ tags: { tag: string }[]; truncated: boolean }>('tag_list', {});
    expect([listed.tags.length, listed.truncated, listed.tags.some((entry) => entry.tag.startsWith('xxx'))]).toEqual([1_000, true, false]);
  });
});
