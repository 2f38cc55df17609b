import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { admin, agent, useBlocks } from './blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Inserted { ids: string[]; documentId: string }

async function notebookWithDoc(act: Awaited<ReturnType<typeof boot>>['act'], markdown = '# Title\n\nFirst paragraph.\n\n- one\n- two\n') {
  const notebook = await act<Created>('notebook_create', { name: 'Work' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Plan', markdown });
  return { notebook: notebook.id, doc: doc.id };
}

describe('documents as files', () => {
  it('writes a notebook folder with .notebook.json and a pretty-printed document file holding the whole tree', async () => {
    const { kernel, act } = await boot();
    const { notebook, doc } = await notebookWithDoc(act);
    const conf = JSON.parse(await readFile(join(kernel.workspace.dataDir, notebook, '.notebook.json'), 'utf8'));
    expect(conf).toEqual({ name: 'Work', icon: '', sort: 0, access: 'private' });
    const text = await readFile(join(kernel.workspace.dataDir, notebook, `${doc}.json`), 'utf8');
    expect(text).toContain('\n  "type": "document",\n');
    const root = JSON.parse(text);
    expect(root.content).toBe('Plan');
    expect(root.children.map((block: { type: string }) => block.type)).toEqual(['heading', 'paragraph', 'list']);
    expect(root.children[2].children[0].children[0].content).toBe('one');
  });

  it('nests a child document in a folder named after its parent and gives its hpath by titles', async () => {
    const { kernel, act } = await boot();
    const { notebook, doc } = await notebookWithDoc(act);
    const child = await act<Created & { hpath: string }>('document_create', { notebook, title: 'Details', parentId: doc });
    expect(child.hpath).toBe('/Plan/Details');
    const files = await readdir(join(kernel.workspace.dataDir, notebook, doc));
    expect(files).toEqual([`${child.id}.json`]);
  });

  it('answers a long document\'s Markdown a part at a time, each ending at a line end, the parts making the whole', async () => {
    const { act } = await boot();
    // 600 paragraphs of about 400 characters, some CJK (as the bench corpus): about 240,000 characters,
    // of which an MCP client saw the first 100,000 only.
    const paragraphs = Array.from({ length: 600 }, (_, i) => `${i % 7 === 0 ? '会議の記録、' : ''}Paragraph ${i}: ${'words of a note '.repeat(24)}`);
    const { doc } = await notebookWithDoc(act, paragraphs.join('\n\n'));
    const whole = await act<{ markdown: string; total: number; next: number | null }>('document_get_markdown', { id: doc });
    expect([whole.total, whole.next]).toEqual([whole.markdown.length, null]);
    let text = '';
    let parts = 0;
    for (let offset: number | null = 0; offset !== null; parts++) {
      const part: { markdown: string; offset: number; next: number | null } = await act('document_get_markdown', { id: doc, offset, limit: 50_000 });
      expect(part.offset).toBe(offset);
      if (part.next !== null) expect(part.markdown.endsWith('\n')).toBe(true);
      text += part.markdown;
      offset = part.next;
    }
    expect(text).toBe(whole.markdown);
    expect(parts).toBeGreaterThan(4);
    const past = await caught(act('document_get_markdown', { id: doc, offset: whole.total + 1 }));
    expect([past.code, past.details?.field]).toEqual(['INVALID_INPUT', 'offset']);
  });

  it('answers a block\'s children a page at a time, the pages making the whole list', async () => {
    const { act } = await boot();
    const { doc } = await notebookWithDoc(act, Array.from({ length: 25 }, (_, i) => `paragraph ${i}`).join('\n\n'));
    const all = await act<{ children: { id: string }[]; total: number; next: number | null }>('block_get_children', { id: doc });
    expect([all.children.length, all.total, all.next]).toEqual([25, 25, null]);
    const ids: string[] = [];
    for (let offset: number | null = 0; offset !== null;) {
      const page: { children: { id: string }[]; next: number | null } = await act('block_get_children', { id: doc, offset, limit: 10 });
      ids.push(...page.children.map((child) => child.id));
      offset = page.next;
    }
    expect(ids).toEqual(all.children.map((child) => child.id));
    const past = await caught(act('block_get_children', { id: doc, offset: 26 }));
    expect([past.code, past.details?.field]).toEqual(['INVALID_INPUT', 'offset']);
  });

  it('returns the document as Markdown and round-trips it through create', async () => {
    const { act } = await boot();
    const { notebook, doc } = await notebookWithDoc(act, '## Tasks\n\n- [ ] open\n- [x] done\n\n| a | b |\n| - | - |\n| 1 | 2 |\n');
    const first = await act<{ markdown: string }>('document_get_markdown', { id: doc });
    const copy = await act<Created>('document_create', { notebook, title: 'Copy', markdown: first.markdown });
    const second = await act<{ markdown: string }>('document_get_markdown', { id: copy.id });
    expect(second.markdown).toBe(first.markdown);
    expect(first.markdown).toContain('- [x] done');
  });

  it('refuses ids that are malformed before they reach a path', async () => {
    const { act } = await boot();
    for (const id of ['../../etc/passwd', '20240101120000-ABCDEFG', '20240101120000-abcdefg/..']) {
      expect((await caught(act('document_get', { id }))).code).toBe('INVALID_INPUT');
    }
    expect((await caught(act('document_get', { id: '20240101120000-abcdefg' }))).code).toBe('NOT_FOUND');
  });
});

describe('blocks', () => {
  it('inserts, updates, moves and deletes blocks, file first and then the index', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notebookWithDoc(act);
    const tree = await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc });
    const [heading, paragraph] = tree.document.children;
    const inserted = await act<Inserted>('block_insert', { previousId: paragraph!.id, markdown: 'Inserted #idea# text with ((' + heading!.id + ' "the title")).' });
    await act('block_update', { id: paragraph!.id, markdown: 'Changed paragraph.' });
    await act('block_move', { id: inserted.ids[0]!, previousId: heading!.id });
    const markdown = (await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown;
    expect(markdown.indexOf('Inserted')).toBeLessThan(markdown.indexOf('Changed paragraph.'));
    const db = new Database(join(kernel.workspace.indexDir, 'quire.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT tag FROM tags WHERE block_id = ?').pluck().all(inserted.ids[0])).toEqual(['idea']);
      expect(db.prepare('SELECT def_block_id, anchor FROM refs WHERE block_id = ?').get(inserted.ids[0])).toEqual({ def_block_id: heading!.id, anchor: 'the title' });
      expect(db.prepare('SELECT content FROM blocks WHERE id = ?').pluck().get(paragraph!.id)).toBe('Changed paragraph.');
      await act('block_delete', { id: inserted.ids[0]! });
      expect(db.prepare('SELECT count(*) FROM blocks WHERE id = ?').pluck().get(inserted.ids[0])).toBe(0);
      expect(db.prepare('SELECT count(*) FROM tags').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });

  it('removes the list its last item leaves, and wraps a block moved into or out of a list as an insert would', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notebookWithDoc(act, '# Title\n\nFirst paragraph.\n\n- one\n\n1. [ ] task\n');
    type Node = { id: string; type: string; subtype?: string; children?: Node[] };
    const children = async () => (await act<{ document: { children: Node[] } }>('document_get', { id: doc })).document.children;
    const [heading, paragraph, bullets, tasks] = await children();
    const one = bullets!.children![0]!;
    // The paragraph goes into the list as a new item of it, keeping its id.
    const intoList = await act<{ parentId: string; wrappedIn?: { id: string; type: string } }>('block_move', { id: paragraph!.id, parentId: bullets!.id });
    expect(intoList.wrappedIn).toEqual({ id: intoList.parentId, type: 'listItem' });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toBe('# Title\n\n- First paragraph.\n- one\n\n1. [ ] task\n');
    // The only task goes out of its list into a new ordered list after the heading; its old list goes.
    const task = tasks!.children![0]!;
    const outOfList = await act<{ parentId: string; wrappedIn?: { type: string }; removedEmptyList?: string }>('block_move', { id: task.id, previousId: heading!.id });
    expect([outOfList.wrappedIn?.type, outOfList.removedEmptyList]).toEqual(['list', tasks!.id]);
    let now = await children();
    expect(now.map((block) => [block.type, block.subtype])).toEqual([['heading', 'h1'], ['list', 'ordered'], ['list', 'unordered']]);
    expect(now[1]!.children!.map((item) => item.id)).toEqual([task.id]);
    // Deleting a list's items one by one removes the list with the last.
    await act('block_delete', { id: one.id });
    const last = await act<{ deleted: string[] }>('block_delete', { id: intoList.parentId });
    expect(last.deleted).toEqual([intoList.parentId, paragraph!.id, bullets!.id]);
    now = await children();
    expect(now.map((block) => block.id)).toEqual([heading!.id, outOfList.parentId]);
    const db = new Database(join(kernel.workspace.indexDir, 'quire.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM blocks WHERE id IN (?, ?)').pluck().get(bullets!.id, tasks!.id)).toBe(0);
    } finally {
      db.close();
    }
  });

  it('records the agent turn as updatedBy so that one query finds every block a turn changed', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notebookWithDoc(act);
    const tree = await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc });
    const appended = await act<Inserted>('block_append', { parentId: doc, markdown: 'Added by the agent.' }, agent('s9', 't3', 'c1'));
    await act('block_update', { id: tree.document.children[1]!.id, markdown: 'Rewritten by the agent.' }, agent('s9', 't3', 'c2'));
    await act('block_update', { id: tree.document.children[0]!.id, markdown: '# By a person' }, admin);
    const db = new Database(join(kernel.workspace.indexDir, 'quire.db'), { readonly: true });
    try {
      const query = "SELECT id FROM blocks WHERE updated_by GLOB 'agent:s9/t3/*' AND type != 'document' ORDER BY id";
      expect(JSON.stringify(db.prepare(`EXPLAIN QUERY PLAN ${query}`).all())).toContain('blocks_updated_by');
      const changed = db.prepare(query).pluck().all();
      expect(changed).toEqual([appended.ids[0], tree.document.children[1]!.id].sort());
      expect(db.prepare('SELECT updated_by FROM blocks WHERE id = ?').pluck().get(tree.document.children[0]!.id)).toBe('person:alice');
    } finally {
      db.close();
    }
  });

  it('keeps the ids and attributes of the items of a list updated whole, so references to them hold: unchanged ones as they were, edited ones beside an inserted one', async () => {
    const { act } = await boot();
    const { notebook, doc } = await notebookWithDoc(act, '- [ ] buy milk for the week\n- [ ] call mum on sunday\n- [ ] write the quarterly report\n');
    type Item = { id: string; type: string; attrs: Record<string, string>; children?: Item[] };
    const items = async () => (await act<{ document: { children: Item[] } }>('document_get', { id: doc })).document.children[0]!;
    const list = await items();
    const [milk, mum, report] = list.children!;
    await act('attr_set', { id: mum!.id, attrs: { 'custom-who': 'family' } });
    await act('attr_set', { id: report!.id, attrs: { 'custom-due': 'friday' } });
    const mumBefore = (await items()).children![1]!;
    const other = await act<Created>('document_create', { notebook, title: 'Refs', markdown: `see ((${report!.id} "the report"))` });
    // The agent reads the list, adds an item on top, ticks and edits the first, edits the last, and writes it back.
    await act('block_update', { id: list.id, markdown: '- [ ] pay the rent\n- [x] buy oat milk for the week\n- [ ] call mum on sunday\n- [ ] write the quarterly report today\n' }, agent());
    const after = (await items()).children!;
    expect(after.map((item) => item.id)).toEqual([expect.not.stringMatching(new RegExp(`^(${milk!.id}|${mum!.id}|${report!.id})$`)), milk!.id, mum!.id, report!.id]);
    // Unchanged: as it was, attributes and stamps. Edited: its attributes, a new stamp.
    expect(after[2]).toEqual(mumBefore);
    expect(after[3]!.attrs['custom-due']).toBe('friday');
    expect(after[3]!.attrs.updatedBy).toMatch(/^agent:/);
    expect((await act<{ backlinks: { documentId: string }[] }>('ref_backlinks', { id: report!.id })).backlinks).toEqual([expect.objectContaining({ documentId: other.id })]);
    // A list rewritten into other items entirely: new blocks, the old ones gone; short items too ("1" is not "x" edited).
    await act('block_update', { id: list.id, markdown: '- [ ] something else\n- [ ] and nothing alike here\n' });
    expect((await items()).children!.map((item) => item.id).some((id) => [milk!.id, mum!.id, report!.id].includes(id))).toBe(false);
    await act('block_update', { id: list.id, markdown: '- 1\n- 2\n' });
    const short = (await items()).children!.map((item) => item.id);
    await act('block_update', { id: list.id, markdown: '- x\n- y\n' });
    expect((await items()).children!.map((item) => item.id).some((id) => short.includes(id))).toBe(false);
  });
});
