import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { reader, useBlocks } from './blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Tree { document: { children: { id: string; type: string; content?: string }[] } }

describe('references, tags, outline and daily notes', () => {
  it('finds backlinks and forward references, and marks a reference to a deleted block unresolved', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const target = await act<Created>('document_create', { notebook: notebook.id, title: 'Target', markdown: 'The target paragraph.\n\nSecond.\n' });
    const [first, second] = (await act<Tree>('document_get', { id: target.id })).document.children;
    const source = await act<Created>('document_create', { notebook: notebook.id, title: 'Source', markdown: `Points at ((${first!.id} "first")) and ((${second!.id})).\n` });
    const backlinks = await act<{ backlinks: { documentId: string; anchor: string | null }[] }>('ref_backlinks', { id: first!.id });
    expect(backlinks.backlinks).toEqual([expect.objectContaining({ documentId: source.id, anchor: 'first' })]);
    await act('block_delete', { id: second!.id });
    const forward = await act<{ refs: { id: string; resolved: boolean; anchor: string | null }[] }>('ref_forward', { id: source.id });
    expect(forward.refs.map((ref) => [ref.id, ref.anchor, ref.resolved])).toEqual([[first!.id, 'first', true], [second!.id, null, false]]);
  });

  it('lists tags with counts and finds blocks by a tag or a parent tag', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'T', markdown: 'a #work/quire# b\n\nc #work# d\n\n`#notatag#` #读书#\n' });
    const { tags } = await act<{ tags: { tag: string; blocks: number }[] }>('tag_list', {});
    expect(tags).toEqual([{ tag: 'work', blocks: 1 }, { tag: 'work/quire', blocks: 1 }, { tag: '读书', blocks: 1 }]);
    expect((await act<{ blocks: unknown[] }>('tag_blocks', { tag: 'work' })).blocks).toHaveLength(2);
    expect((await act<{ blocks: unknown[] }>('tag_blocks', { tag: 'work/quire' })).blocks).toHaveLength(1);
  });

  it('nests headings into an outline', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'T', markdown: '# A\n\n## A1\n\n### A1a\n\n## A2\n\n# B\n' });
    const { outline } = await act<{ outline: { text: string; children: { text: string; children: { text: string }[] }[] }[] }>('outline_get', { id: doc.id });
    expect(outline.map((item) => [item.text, item.children.map((child) => [child.text, child.children.map((leaf) => leaf.text)])]))
      .toEqual([['A', [['A1', ['A1a']], ['A2', []]]], ['B', []]]);
  });

  it('creates the daily note on the first append and adds to it afterwards', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    expect(await act('dailynote_get', { notebook: notebook.id, date: '2026-11-29' })).toMatchObject({ id: null });
    const first = await act<{ id: string; created: boolean; ids: string[] }>('dailynote_append', { notebook: notebook.id, date: '2026-11-29', markdown: 'morning' });
    const second = await act<{ id: string; created: boolean; ids: string[] }>('dailynote_prepend', { notebook: notebook.id, date: '2026-11-29', markdown: 'before' });
    expect([first.created, second.created, second.id]).toEqual([true, false, first.id]);
    // The new blocks' ids, whether the call created the note or added to it: the caller may refer to them next.
    const blocks = (await act<{ document: { children: { id: string }[] } }>('document_get', { id: first.id })).document.children.map((block) => block.id);
    expect([first.ids, second.ids]).toEqual([[blocks[1]], [blocks[0]]]);
    const markdown = (await act<{ markdown: string; title: string }>('document_get_markdown', { id: first.id }));
    expect(markdown.title).toBe('2026-11-29');
    expect(markdown.markdown.trim()).toBe('before\n\nmorning');
    expect((await caught(act('dailynote_get', { notebook: notebook.id, date: '2026-02-30' }))).code).toBe('INVALID_INPUT');
  });

  it('duplicates a daily note as a document that is not that day\'s note, and a document of the longest title', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const day = await act<{ id: string }>('dailynote_append', { notebook: notebook.id, date: '2026-11-29', markdown: 'morning' });
    const copy = await act<Created>('document_duplicate', { id: day.id });
    await act('document_remove', { id: day.id });
    expect(await act('dailynote_get', { notebook: notebook.id, date: '2026-11-29' })).toMatchObject({ id: null });
    expect((await act<{ attrs: Record<string, string> }>('document_info', { id: copy.id })).attrs).not.toHaveProperty('custom-dailynote-20261129');
    const long = await act<Created>('document_create', { notebook: notebook.id, title: 't'.repeat(512) });
    const longCopy = await act<Created>('document_duplicate', { id: long.id });
    expect((await act<{ title: string }>('document_get_markdown', { id: longCopy.id })).title).toMatch(/^t+ \(copy\)$/);
    // Characters outside the BMP count two units each in a title's 512.
    const emoji = await act<Created>('document_create', { notebook: notebook.id, title: '🍅'.repeat(256) });
    const emojiCopy = await act<Created>('document_duplicate', { id: emoji.id });
    expect((await act<{ title: string }>('document_get_markdown', { id: emojiCopy.id })).title).toMatch(/^(🍅)+ \(copy\)$/u);
  });
});

describe('what a reader may see', () => {
  it('shows a reader published notebooks only and answers not found for private ones', async () => {
    const { act } = await boot();
    const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    const pub = await act<Created>('document_create', { notebook: open.id, title: 'Public', markdown: 'visible #shared#\n' });
    const priv = await act<Created>('document_create', { notebook: closed.id, title: 'Private', markdown: `secret #shared# ((${pub.id}))\n` });
    const privBlock = (await act<Tree>('document_get', { id: priv.id })).document.children[0]!;
    expect((await act<{ notebooks: { id: string }[] }>('notebook_list', {}, reader)).notebooks.map((nb) => nb.id)).toEqual([open.id]);
    for (const [target, input] of [
      ['document_get', { id: priv.id }], ['document_get_markdown', { id: priv.id }], ['document_info', { id: priv.id }],
      ['block_get', { id: privBlock.id }], ['attr_get', { id: privBlock.id }], ['outline_get', { id: priv.id }],
      ['document_list', { notebook: closed.id }], ['ref_forward', { id: priv.id }],
    ] as const) {
      expect([target, (await caught(act(target, input, reader))).code]).toEqual([target, 'NOT_FOUND']);
    }
    expect((await act<{ blocks: unknown[] }>('block_batch_get', { ids: [privBlock.id] }, reader)).blocks).toEqual([]);
    expect((await act<{ tags: { blocks: number }[] }>('tag_list', {}, reader)).tags).toEqual([{ tag: 'shared', blocks: 1 }]);
    expect((await act<{ blocks: { documentId: string }[] }>('tag_blocks', { tag: 'shared' }, reader)).blocks.map((b) => b.documentId)).toEqual([pub.id]);
    expect((await act<{ backlinks: unknown[] }>('ref_backlinks', { id: pub.id }, reader)).backlinks).toEqual([]);
    expect((await act<{ backlinks: unknown[] }>('ref_backlinks', { id: pub.id })).backlinks).toHaveLength(1);
    await act('notebook_set_access', { id: closed.id, access: 'published' });
    expect((await act<{ document: { id: string } }>('document_get', { id: priv.id }, reader)).document.id).toBe(priv.id);
  });

  it('refuses every write to a reader', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
    expect((await caught(act('document_create', { notebook: notebook.id, title: 'x' }, reader))).code).toBe('FORBIDDEN');
  });
});

describe('a new workspace', () => {
  it('gets a welcome notebook to read and search, once', async () => {
    const { kernel, act } = await boot({ welcome: true });
    const { notebooks } = await act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {});
    expect(notebooks.map((nb) => nb.name)).toEqual(['Welcome']);
    const { documents } = await act<{ documents: { id: string; title: string; childDocuments: number }[] }>('document_list', { notebook: notebooks[0]!.id });
    expect(documents).toEqual([expect.objectContaining({ title: 'Welcome to Quire', childDocuments: 1 })]);
    expect((await act<{ blocks: unknown[] }>('tag_blocks', { tag: 'welcome' })).blocks).toHaveLength(1);
    await act('notebook_remove', { id: notebooks[0]!.id });
    await kernel.close();
    const again = await boot({ welcome: true, workspace: kernel.workspace.root });
    expect((await again.act<{ notebooks: unknown[] }>('notebook_list', {})).notebooks).toEqual([]);
  });
});
