import { mkdir, readFile, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { REPO_ROOT, caught } from '../../helpers/harness.js';
import { dumpIndex, useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Listed { documents: { id: string; title: string; childDocuments: number }[] }

async function sourceFolder(): Promise<string> {
  const folder = await tempDir('quire-md-');
  await writeFile(join(folder, 'Alpha.md'), '# Alpha\n\nIntro with a [link](https://example.com).\n\n- [ ] task\n');
  await mkdir(join(folder, 'Alpha'));
  await writeFile(join(folder, 'Alpha', 'Beta.md'), '## Beta\n\n```js\nlet x = 1;\n```\n');
  await mkdir(join(folder, 'Gamma'));
  await writeFile(join(folder, 'Gamma', 'Delta.md'), '| a | b |\n| - | - |\n| 1 | 2 |\n');
  await writeFile(join(folder, 'notes.txt'), 'not markdown');
  await symlink(join(folder, 'Alpha.md'), join(folder, 'Linked.md'));
  return folder;
}

/** Titles and Markdown of every document below a parent, depth first: what must survive a round trip. */
async function tree(act: Act, notebook: string, parentId?: string): Promise<unknown[]> {
  const { documents } = await act<Listed>('document_list', { notebook, ...(parentId ? { parentId } : {}) });
  const out: unknown[] = [];
  for (const doc of documents.sort((a, b) => a.title.localeCompare(b.title))) {
    const { markdown } = await act<{ markdown: string }>('document_get_markdown', { id: doc.id });
    out.push({ title: doc.title, markdown, children: await tree(act, notebook, doc.id) });
  }
  return out;
}

describe('import and export of Markdown', () => {
  it('imports a folder as nested documents, skipping symbolic links and other files', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Imported' });
    const result = await act<{ documents: number; skipped: { path: string; reason: string }[] }>('import_markdown', { notebook: notebook.id, path: await sourceFolder() });
    expect(result.documents).toBe(4);
    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'symbolic links are not followed' })]);
    const imported = await tree(act, notebook.id) as { title: string; children: { title: string }[] }[];
    expect(imported.map((doc) => [doc.title, doc.children.map((child) => child.title)])).toEqual([['Alpha', ['Beta']], ['Gamma', ['Delta']]]);
  });

  it('lists the first 1,000 files an import skipped and counts them all (the answer is kept with its job)', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Imported' });
    const folder = await tempDir();
    await writeFile(join(folder, 'note.md'), 'kept');
    for (let i = 0; i < 1005; i++) await symlink(join(folder, 'note.md'), join(folder, `link-${i}.md`));
    const result = await act<{ documents: number; skipped: unknown[]; skippedCount?: number }>('import_markdown', { notebook: notebook.id, path: folder });
    expect([result.documents, result.skipped.length, result.skippedCount]).toEqual([1, 1000, 1005]);
  });

  it('exports documents with long CJK titles, and titles differing only in Unicode form, each to a file of its own', async () => {
    const { act } = await boot();
    const notebook = await act<{ id: string }>('notebook_create', { name: 'Long names' });
    const long = '長い題名'.repeat(25);
    await act('document_create', { notebook: notebook.id, title: long, markdown: 'one' });
    await act('document_create', { notebook: notebook.id, title: 'Cafe\u0301', markdown: 'decomposed' });
    await act('document_create', { notebook: notebook.id, title: 'Caf\u00e9', markdown: 'composed' });
    const out = await tempDir();
    const result = await act<{ files: number }>('export_markdown', { id: notebook.id, folder: out });
    expect(result.files).toBe(3);
    const names = await readdir(out);
    expect(names).toHaveLength(3);
    expect(names.every((name) => Buffer.byteLength(name) <= 160)).toBe(true);
    expect(new Set(await Promise.all(names.map((name) => readFile(join(out, name), 'utf8'))))).toEqual(new Set(['one\n', 'decomposed\n', 'composed\n']));
  });

  it('exports a notebook that imports back to the same documents', async () => {
    const { act } = await boot();
    const first = await act<Created>('notebook_create', { name: 'First' });
    await act('import_markdown', { notebook: first.id, path: await sourceFolder() });
    const out = join(await tempDir(), 'export');
    const exported = await act<{ files: number }>('export_markdown', { id: first.id, folder: out });
    expect(exported.files).toBe(4);
    expect((await readdir(out)).sort()).toEqual(['Alpha', 'Alpha.md', 'Gamma', 'Gamma.md']);
    expect((await caught(act('export_markdown', { id: first.id, folder: out }))).code).toBe('CONFLICT');
    const second = await act<Created>('notebook_create', { name: 'Second' });
    await act('import_markdown', { notebook: second.id, path: out });
    expect(await tree(act, second.id)).toEqual(await tree(act, first.id));
  });

  it('reads a Markdown file\'s front matter as the document\'s attributes, and writes them back as front matter', async () => {
    const { act } = await boot();
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Post.md'), '---\ntitle: Hello\ntags: [a, b]\ndraft: true\n---\n\n# Body\n\nText.\n');
    // A rule, a line and a rule at the top that are no map of properties stay Markdown, a heading among them too.
    await writeFile(join(folder, 'Rules.md'), '---\nJust a line\n---\n\nMore.\n');
    await writeFile(join(folder, 'Minutes.md'), '---\n# Meeting notes\nAgenda: budget\n---\n\nBody.\n');
    // Keys holding a colon are front matter all the same; a # line after a key, or a sentence with colons, is not.
    await writeFile(join(folder, 'Social.md'), '---\nog:image: cover.png\ntitle: Card\n---\n\nText.\n');
    await writeFile(join(folder, 'Tagged.md'), '---\nTitle: Trip\n#hashtag day one\n---\n');
    await writeFile(join(folder, 'Met.md'), '---\nWe met at 10:30. Result: approved\n---\n');
    const first = await act<Created>('notebook_create', { name: 'Blog' });
    await act('import_markdown', { notebook: first.id, path: folder });
    const { documents } = await act<Listed>('document_list', { notebook: first.id });
    const post = await act<{ document: { attrs: Record<string, string>; children: { type: string; content?: string }[] } }>('document_get', { id: documents.find((doc) => doc.title === 'Post')!.id });
    expect(post.document.attrs).toMatchObject({ 'custom-title': 'Hello', 'custom-tags': '["a","b"]', 'custom-draft': 'true' });
    expect(post.document.children.map((block) => [block.type, block.content])).toEqual([['heading', 'Body'], ['paragraph', 'Text.']]);
    const rules = await act<{ markdown: string }>('document_get_markdown', { id: documents.find((doc) => doc.title === 'Rules')!.id });
    expect(rules.markdown).toBe('---\n\n## Just a line\n\nMore.\n');
    const social = await act<{ document: { attrs: Record<string, string>; children: { content?: string }[] } }>('document_get', { id: documents.find((doc) => doc.title === 'Social')!.id });
    expect(social.document.children.map((block) => block.content)).toEqual(['Text.']);
    expect(social.document.attrs).toMatchObject({ 'custom-title': 'Card' });
    expect(Object.values(social.document.attrs)).toContain('cover.png');
    for (const [title, heading] of [['Tagged', '#hashtag day one'], ['Met', 'We met at 10:30. Result: approved']] as const) {
      const kept = await act<{ markdown: string }>('document_get_markdown', { id: documents.find((doc) => doc.title === title)!.id });
      expect(kept.markdown).toContain(heading);
    }
    const minutes = await act<{ markdown: string }>('document_get_markdown', { id: documents.find((doc) => doc.title === 'Minutes')!.id });
    expect(minutes.markdown).toBe('---\n\n# Meeting notes\n\n## Agenda: budget\n\nBody.\n');
    // A document that starts with a rule and a line like a property is exported so that it reads back the same.
    await act('document_create', { notebook: first.id, title: 'Ruled', markdown: '***\n\nStatus: draft\n\n***\n\nBody.' });
    const out = join(await tempDir(), 'export');
    await act('export_markdown', { id: first.id, folder: out });
    expect(await readFile(join(out, 'Ruled.md'), 'utf8')).toBe('***\n\nStatus: draft\n\n---\n\nBody.\n');
    expect(await readFile(join(out, 'Post.md'), 'utf8')).toBe('---\ndraft: true\ntags:\n  - a\n  - b\ntitle: Hello\n---\n# Body\n\nText.\n');
    const second = await act<Created>('notebook_create', { name: 'Again' });
    await act('import_markdown', { notebook: second.id, path: out });
    const again = await act<Listed>('document_list', { notebook: second.id });
    const back = await act<{ document: { attrs: Record<string, string> } }>('document_get', { id: again.documents.find((doc) => doc.title === 'Post')!.id });
    expect(back.document.attrs).toMatchObject({ 'custom-title': 'Hello', 'custom-tags': '["a","b"]', 'custom-draft': 'true' });
    expect(await tree(act, second.id)).toEqual(await tree(act, first.id));
  });

  it('keeps front matter numbers as they are written, through an export and back', async () => {
    const { act } = await boot();
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Order.md'), '\ufeff---\norder: 12345678901234567890\nversion: 1.10\nzip: 01234\nlimit: .inf\nsizes: [1.10, 2, {w: 007, h: 1e3}]\ncount: 3\nyears: {2024: done, 2.50: half}\n---\n\nText.\n');
    const first = await act<Created>('notebook_create', { name: 'Shop' });
    await act('import_markdown', { notebook: first.id, path: folder });
    const attrsOf = async (notebook: string): Promise<Record<string, string>> => {
      const { documents } = await act<Listed>('document_list', { notebook });
      return (await act<{ document: { attrs: Record<string, string> } }>('document_get', { id: documents[0]!.id })).document.attrs;
    };
    const numbers = {
      'custom-order': '12345678901234567890', 'custom-version': '1.10', 'custom-zip': '01234', 'custom-limit': '.inf',
      'custom-sizes': '[1.10,2,{"w":"007","h":1e3}]', 'custom-count': '3', 'custom-years': '{"2024":"done","2.50":"half"}',
    };
    expect(await attrsOf(first.id)).toMatchObject(numbers);
    const out = join(await tempDir(), 'export');
    await act('export_markdown', { id: first.id, folder: out });
    // Those JSON spells go out as numbers, spelt as they came; the others as the strings they were kept as.
    expect(await readFile(join(out, 'Order.md'), 'utf8')).toBe('---\ncount: 3\nlimit: ".inf"\norder: 12345678901234567890\nsizes:\n  - 1.10\n  - 2\n  - w: "007"\n    h: 1e3\nversion: 1.10\nyears:\n  "2024": done\n  "2.50": half\nzip: "01234"\n---\nText.\n');
    const second = await act<Created>('notebook_create', { name: 'Again' });
    await act('import_markdown', { notebook: second.id, path: out });
    expect(await attrsOf(second.id)).toMatchObject(numbers);
  });

  it('reads UTF-16 with a byte order mark, and refuses text in another encoding by name instead of filling it with replacement characters', async () => {
    const { act } = await boot();
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Wide.md'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('# 中文笔记\n\nUTF-16 text.\n', 'utf16le')]));
    // "# 中文笔记" in GBK, as older Chinese note collections are kept.
    await writeFile(join(folder, 'Old.md'), Buffer.from([0x23, 0x20, 0xd6, 0xd0, 0xce, 0xc4, 0xb1, 0xca, 0xbc, 0xc7, 0x0a]));
    // UTF-16 without a byte order mark (every other byte zero) is read too; text with NULs in it is no note.
    await writeFile(join(folder, 'Bare.md'), Buffer.from('# Bare, it\u2019s\n', 'utf16le'));
    await writeFile(join(folder, 'Binary.md'), Buffer.from([0x23, 0x20, 0x41, 0x00, 0x42, 0x43, 0x44]));
    const notebook = await act<Created>('notebook_create', { name: 'Encodings' });
    const result = await act<{ skipped: { path: string; reason: string }[] }>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.skipped).toEqual([
      { path: join(folder, 'Binary.md'), reason: expect.stringContaining('holds NUL characters') },
      { path: join(folder, 'Old.md'), reason: expect.stringContaining('not UTF-8 text (the first byte that is not is at offset 2)') },
    ]);
    const bare = await act<{ markdown: string }>('document_get_markdown', { id: (await act<Listed>('document_list', { notebook: notebook.id })).documents.find((doc) => doc.title === 'Bare')!.id });
    expect(bare.markdown).toBe('# Bare, it\u2019s\n');
    const { documents } = await act<Listed>('document_list', { notebook: notebook.id });
    const wide = await act<{ markdown: string }>('document_get_markdown', { id: documents.find((doc) => doc.title === 'Wide')!.id });
    expect(wide.markdown).toBe('# 中文笔记\n\nUTF-16 text.\n');
    const old = await act<{ markdown: string }>('document_get_markdown', { id: documents.find((doc) => doc.title === 'Old')!.id });
    expect(old.markdown).not.toContain('\ufffd');
  });

  it('keeps a file\'s time of change as its blocks\' created and updated, not the time of the import', async () => {
    const { act } = await boot();
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Diary.md'), '# May\n\nA day.\n');
    const then = new Date('2020-05-01T08:30:00.000Z');
    await utimes(join(folder, 'Diary.md'), then, then);
    const notebook = await act<Created>('notebook_create', { name: 'Old' });
    await act('import_markdown', { notebook: notebook.id, path: folder });
    const { documents } = await act<Listed>('document_list', { notebook: notebook.id });
    const diary = await act<{ document: { attrs: Record<string, string>; children: { attrs: Record<string, string> }[] } }>('document_get', { id: documents[0]!.id });
    for (const attrs of [diary.document.attrs, ...diary.document.children.map((block) => block.attrs)]) {
      expect([attrs.created, attrs.updated]).toEqual([then.toISOString(), then.toISOString()]);
    }
  });

  it('exports the attachments its notes link into the folder\'s assets/, each link relative to its file', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Pictures' });
    await mkdir(join(kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'assets', 'cat photo.png'), 'png bytes');
    await writeFile(join(kernel.workspace.root, 'assets', 'shot(1).png'), 'shot bytes');
    await writeFile(join(kernel.workspace.root, 'assets', 'sale.png'), 'sale bytes');
    await mkdir(join(kernel.workspace.root, 'assets', 'sub'));
    await writeFile(join(kernel.workspace.root, 'assets', 'sub', 'titled.png'), 'titled bytes');
    const top = await act<Created>('document_create', { notebook: notebook.id, title: 'Top', markdown: '![cat](assets/cat%20photo.png)\n\n`![code](assets/not-a-link.png)`\n\n![a \\[1\\]](assets/sub/titled.png "Title")\n' });
    await act('document_create', { notebook: notebook.id, title: 'Below', parentId: top.id, markdown: 'See ![cat](assets/cat%20photo.png) and [gone](assets/gone.pdf) and ![shot](assets/shot\\(1\\).png).\n\nSave 50%% today ![sale](assets/sale.png)\n' });
    const out = join(await tempDir(), 'export');
    const result = await act<{ attachments: unknown }>('export_markdown', { id: notebook.id, folder: out });
    // `%%` is text in plain Markdown, not an Obsidian comment hiding the link after it.
    expect(result.attachments).toEqual({ linked: 5, copied: 4, missing: ['gone.pdf'] });
    expect(await readFile(join(out, 'assets', 'sub', 'titled.png'), 'utf8')).toBe('titled bytes');
    expect(await readFile(join(out, 'assets', 'shot(1).png'), 'utf8')).toBe('shot bytes');
    expect(await readFile(join(out, 'assets', 'cat photo.png'), 'utf8')).toBe('png bytes');
    expect(await readFile(join(out, 'Top.md'), 'utf8')).toBe('![cat](assets/cat%20photo.png)\n\n`![code](assets/not-a-link.png)`\n\n![a \\[1\\]](assets/sub/titled.png "Title")\n');
    expect(await readFile(join(out, 'Top', 'Below.md'), 'utf8')).toBe('See ![cat](../assets/cat%20photo.png) and [gone](../assets/gone.pdf) and ![shot](../assets/shot\\(1\\).png).\n\nSave 50%% today ![sale](../assets/sale.png)\n');
  });

  it('imports .markdown files as .md ones, in a folder and alone', async () => {
    const { act } = await boot();
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Long.markdown'), '# Long\n');
    await writeFile(join(folder, 'Short.md'), '# Short\n');
    const notebook = await act<Created>('notebook_create', { name: 'Both' });
    expect((await act<{ documents: number }>('import_markdown', { notebook: notebook.id, path: folder })).documents).toBe(2);
    expect((await act<{ documents: number }>('import_markdown', { notebook: notebook.id, path: join(folder, 'Long.markdown') })).documents).toBe(1);
    const { documents } = await act<Listed>('document_list', { notebook: notebook.id });
    expect(documents.map((doc) => doc.title).sort()).toEqual(['Long', 'Long', 'Short']);
  });

  it('copies the local files a folder\'s notes link into assets/ and points the links there, leaving links out of the folder as written', async () => {
    const { kernel, act } = await boot();
    const top = await tempDir('quire-md-');
    const folder = join(top, 'notes');
    await mkdir(join(folder, 'img'), { recursive: true });
    await mkdir(join(folder, 'Trip', 'img'), { recursive: true });
    await writeFile(join(folder, 'img', 'map (1).png'), 'map bytes');
    await writeFile(join(folder, 'Trip', 'img', 'map (1).png'), 'other map bytes');
    await writeFile(join(top, 'secret.txt'), 'outside the folder');
    await writeFile(join(folder, 'Home.md'), '![map](<img/map (1).png> "The map") and [file](../secret.txt) and ![web](https://x.y/a.png) and `![code](img/map (1).png)`\n');
    await writeFile(join(folder, 'Trip.md'), 'Same ![map](img/map%20\\(1\\).png).\n');
    await writeFile(join(folder, 'Trip', 'Day.md'), 'Another ![map](img/map%20\\(1\\).png) and ![gone](img/none.png).\n');
    const notebook = await act<Created>('notebook_create', { name: 'Trips' });
    const result = await act<{ attachmentLinks: number; skipped: { path: string; reason: string }[] }>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.attachmentLinks).toBe(3);
    expect(result.skipped.map((entry) => [entry.path, entry.reason.split(': ')[1]])).toEqual([[join(folder, 'Home.md'), '../secret.txt'], [join(folder, 'Trip', 'Day.md'), 'img/none.png']]);
    const assets = join(kernel.workspace.root, 'assets');
    expect((await readdir(assets)).sort()).toEqual(['map (1)-' + createHash('sha256').update('other map bytes').digest('hex').slice(0, 10) + '.png', 'map (1).png']);
    const markdownOf = async (title: string, parentId?: string) => {
      const { documents } = await act<Listed>('document_list', { notebook: notebook.id, ...(parentId ? { parentId } : {}) });
      const doc = documents.find((entry) => entry.title === title)!;
      return { id: doc.id, markdown: (await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown };
    };
    expect((await markdownOf('Home')).markdown).toBe('![map](assets/map%20%281%29.png "The map") and [file](../secret.txt) and ![web](https://x.y/a.png) and `![code](img/map (1).png)`\n');
    const trip = await markdownOf('Trip');
    expect(trip.markdown).toBe('Same ![map](assets/map%20%281%29.png).\n');
    expect((await markdownOf('Day', trip.id)).markdown).toMatch(/^Another !\[map\]\(assets\/map%20%281%29-[0-9a-f]{10}\.png\) and !\[gone\]\(img\/none\.png\)\.\n$/);
  });

  it('copies nothing of the workspace, nor a hidden file, when a note beside the workspace links them', async () => {
    const { kernel, act } = await boot();
    const beside = join(kernel.workspace.root, '..');
    const inside = kernel.workspace.root.split(/[\\/]/).pop()!;
    await mkdir(join(beside, 'keys'), { recursive: true });
    await writeFile(join(beside, 'keys', '.env'), 'SECRET=1');
    await writeFile(join(beside, 'note.md'), `[usage](${inside}/.quire/usage.db) [config](${inside}/quire.json) [env](keys/.env) [host](/etc/hostname)\n`);
    const notebook = await act<Created>('notebook_create', { name: 'Beside' });
    const result = await act<{ attachmentLinks?: number; skipped: { reason: string }[] }>('import_markdown', { notebook: notebook.id, path: join(beside, 'note.md') });
    expect(result.attachmentLinks).toBeUndefined();
    expect(result.skipped.map((entry) => entry.reason.split(': ')[1])).toEqual([`${inside}/.quire/usage.db, ${inside}/quire.json, keys/.env, /etc/hostname`]);
    expect(await readdir(join(kernel.workspace.root, 'assets')).catch(() => [])).toEqual([]);
  });

  it('exports no attachment through a sub-folder of assets/ that links elsewhere', async () => {
    const { kernel, act } = await boot();
    await mkdir(join(kernel.workspace.root, 'assets', 'sub'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'assets', 'sub', 'x.png'), 'x bytes');
    const notebook = await act<Created>('notebook_create', { name: 'Linked' });
    await act('document_create', { notebook: notebook.id, title: 'Pic', markdown: '![x](assets/sub/x.png)' });
    const out = join(await tempDir(), 'export');
    const elsewhere = await tempDir();
    await mkdir(join(out, 'assets'), { recursive: true });
    await symlink(elsewhere, join(out, 'assets', 'sub'));
    const result = await act<{ attachments: unknown }>('export_markdown', { id: notebook.id, folder: out });
    expect(result.attachments).toEqual({ linked: 1, copied: 0, missing: ['sub/x.png'] });
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('scans links in one pass, whatever the line (a label after each escaped bracket took the square)', async () => {
    const line = `[${'\\['.repeat(100_000)}`;
    const folder = await tempDir('quire-md-');
    await writeFile(join(folder, 'Brackets.md'), `${line}\n`);
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Brackets' });
    expect((await act<{ documents: number }>('import_markdown', { notebook: notebook.id, path: folder })).documents).toBe(1);
    const out = join(await tempDir(), 'export');
    expect((await act<{ files: number }>('export_markdown', { id: notebook.id, folder: out })).files).toBe(1);
    expect((await act<{ files: number }>('export_markdown', { id: notebook.id, folder: join(out, 'vault'), flavor: 'obsidian' })).files).toBe(1);
  });

  it('runs from the CLI with progress, and index rebuild reproduces the index', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'CLI' });
    await kernel.close();
    const folder = await tempDir('quire-many-');
    for (let i = 0; i < 250; i++) await writeFile(join(folder, `note-${String(i).padStart(3, '0')}.md`), `# Note ${i}\n\nBody #n${i % 5}#\n`);
    // Files a shell pattern gives are refused whole: the first was imported, the rest dropped, exit 0.
    const many = bufferIO();
    expect(await runCli(['import', join(folder, 'note-000.md'), join(folder, 'note-001.md'), join(folder, 'note-002.md'), '--notebook', 'cli', '--workspace', workspace], many)).toBe(2);
    expect(many.errText()).toContain("quire import: unexpected arguments '" + join(folder, 'note-001.md') + "', '" + join(folder, 'note-002.md') + "': it takes one argument besides options; to import many files, give the folder that holds them");
    const io = bufferIO();
    expect(await runCli(['import', folder, '--notebook', 'cli', '--workspace', workspace], io)).toBe(0);
    expect(io.outText()).toMatch(/^imported 250 document\(s\), 750 block\(s\)/);
    expect(io.errText()).toMatch(/\] 26% 64\/250 documents imported\n[\s\S]*\] 100% 250\/250 documents imported/);
    const before = dumpIndex(workspace);
    const rebuild = bufferIO();
    expect(await runCli(['index', 'rebuild', '--workspace', workspace], rebuild)).toBe(0);
    expect(rebuild.outText()).toMatch(/^indexed 250 document\(s\), 750 block\(s\)/);
    expect(dumpIndex(workspace)).toEqual(before);
    const out = join(await tempDir(), 'out');
    const exported = bufferIO();
    expect(await runCli(['export', notebook.id, out, '--workspace', workspace], exported)).toBe(0);
    expect(await readFile(join(out, 'note-007.md'), 'utf8')).toBe('# Note 7\n\nBody #n2#\n');
  });

  it('imports from the CLI into the notebook named exactly as given, beside one named so but for case', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    const upper = await act<Created>('notebook_create', { name: 'Work' });
    const lower = await act<Created>('notebook_create', { name: 'work' });
    await kernel.close();
    const folder = await tempDir('quire-case-');
    await writeFile(join(folder, 'plan.md'), '# Plan\n\nSteps.\n');
    // It was "Several notebooks are named 'work'", exit 1, though one is named so.
    for (const [name, expected] of [['work', lower.id], ['Work', upper.id]] as const) {
      const io = bufferIO();
      expect([name, await runCli(['import', folder, '--notebook', name, '--workspace', workspace], io), io.errText()]).toEqual([name, 0, expect.any(String)]);
      const { kernel: again, act: actAgain } = await boot({ workspace });
      expect((await actAgain<{ documents: unknown[] }>('document_list', { notebook: expected })).documents).toHaveLength(1);
      await again.close();
    }
    const neither = bufferIO();
    expect(await runCli(['import', folder, '--notebook', 'WORK', '--workspace', workspace], neither)).toBe(1);
    expect(neither.errText()).toContain("Several notebooks are named 'WORK'; give its id");
  });

  it('imports with the built CLI, which parses on a worker thread', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Built' });
    await kernel.close();
    const folder = await sourceFolder();
    const cli = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');
    const run = promisify(execFile);
    const result = await run(process.execPath, [cli, 'import', folder, '--notebook', notebook.id, '--workspace', workspace]).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(result.stdout).toMatch(/^imported 4 document\(s\)/);
    expect(result.stderr).toContain('symbolic links are not followed');
    const again = await boot({ workspace });
    const imported = await tree(again.act, notebook.id) as { title: string }[];
    expect(imported.map((doc) => doc.title)).toEqual(['Alpha', 'Gamma']);
  });
});
