import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Block } from '../../../plugins/blocks/block-model.js';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { convertObsidianNote } from '../../../plugins/blocks/obsidian/obsidian-in.js';
import { planObsidianImport } from '../../../plugins/blocks/obsidian/obsidian-import.js';
import type { ActionCall } from '../../../core/index.js';
import { newExportReport, toObsidianMarkdown } from '../../../plugins/blocks/obsidian/obsidian-out.js';
import { ObsidianVault } from '../../../plugins/blocks/obsidian/obsidian-vault.js';
import { assignBlockIds, blockKeysOf } from '../../../plugins/blocks/obsidian/block-ids.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { parseTags } from '../../../plugins/blocks/inline-syntax.js';
import { useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Listed { documents: { id: string; title: string }[] }
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/** A vault written the way Obsidian writes one. */
async function writeVault(): Promise<string> {
  const vault = join(await tempDir('quire-vault-'), 'My Vault');
  await mkdir(join(vault, '.obsidian'), { recursive: true });
  await writeFile(join(vault, '.obsidian', 'app.json'), '{"useMarkdownLinks":false}');
  await mkdir(join(vault, 'Projects'));
  await mkdir(join(vault, 'Daily'));
  await mkdir(join(vault, 'attachments'));
  await writeFile(join(vault, 'attachments', 'diagram.png'), PNG);
  await writeFile(join(vault, 'paper.pdf'), '%PDF-1.4 a paper');
  // Obsidian's own name for a pasted image: spaces.
  await writeFile(join(vault, 'attachments', 'Pasted image 20240105.png'), Buffer.concat([PNG, Buffer.from('pasted')]));
  await writeFile(join(vault, 'Home.md'), [
    '---',
    'title: Home page',
    'tags: [start, area/work]',
    'status: draft',
    'count: 3',
    'flag: true',
    'zip: "01234"',
    'code: "123"',
    'Due Date: 2024-02-01',
    'aliases:',
    '  - Start',
    '---',
    '# Welcome',
    '',
    'See [[Projects/Alpha]], [[Beta|the beta]], [[Alpha#Goals]] and [[Alpha#goals|the goals]].',
    'Also [[Missing note]] and [a markdown link](Beta.md) and [the web](https://example.com/#x).',
    '',
    'Tags #inbox and #area/work and #读书, not #123 or `#code` or a [[link in `code`]].',
    '',
    '![[diagram.png]]',
    '',
    'A paper: [[paper.pdf]] and an embed ![[paper.pdf|the paper]] inline.',
    '',
    '![[Pasted image 20240105.png]]',
    '',
    '```js',
    'const link = "[[Beta]] #notatag";',
    '```',
    '',
  ].join('\n'));
  await writeFile(join(vault, 'Projects', 'Alpha.md'), [
    '## Goals',
    '',
    'Ship it. Linked from ![[Beta]] inline.',
    '',
    '> [!info]- Details here',
    '> Hidden content with [[Home]].',
    '',
    '> [!WARNING]',
    '> Careful.',
    '',
    '- [ ] a task #todo',
    '- [x] done ^item-1',
    '',
    '![[Beta]]',
    '',
    'See [[Beta#^abc123]], the table [[Beta#^tbl]], the item [[Alpha#^item-1]] and [[Beta#^gone]].',
    '',
  ].join('\n'));
  await writeFile(join(vault, 'Beta.md'), 'Some text ^abc123\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n^tbl\n\n$$\nx^2 #nottag\n$$\n\n> plain quote #quoted\n');
  await writeFile(join(vault, 'Daily', '2024-01-05.md'), '---\nmood: 😀\n---\n读书笔记 [[Home]] #读书\n');
  return vault;
}

/** A notebook's documents as comparable data: blocks by path, refs named by the document title and block position. */
async function snapshot(act: Act, notebook: string): Promise<Record<string, unknown>> {
  const docs: { id: string; title: string; path: string }[] = [];
  const walk = async (parentId: string | undefined, prefix: string): Promise<void> => {
    const { documents } = await act<Listed>('document_list', { notebook, ...(parentId ? { parentId } : {}) });
    for (const doc of documents) {
      docs.push({ id: doc.id, title: doc.title, path: `${prefix}${doc.title}` });
      await walk(doc.id, `${prefix}${doc.title}/`);
    }
  };
  await walk(undefined, '');
  const roots = new Map<string, Block>();
  for (const doc of docs) roots.set(doc.id, (await act<{ document: Block }>('document_get', { id: doc.id })).document);
  // Every block id as "<document path>#<index in document order>".
  const names = new Map<string, string>();
  for (const doc of docs) {
    let n = 0;
    const visit = (block: Block): void => {
      names.set(block.id, `${doc.path}#${n++}`);
      for (const child of block.children ?? []) visit(child);
    };
    visit(roots.get(doc.id)!);
  }
  const rename = (text: string | undefined) => text?.replace(/\d{14}-[0-9a-z]{7}/g, (id) => names.get(id) ?? `missing:${id}`);
  const out: Record<string, unknown> = {};
  for (const doc of docs) {
    const flat: unknown[] = [];
    const visit = (block: Block): void => {
      const attrs = Object.fromEntries(Object.entries(block.attrs).filter(([key]) => !['created', 'updated', 'updatedBy'].includes(key)));
      flat.push({ type: block.type, subtype: block.subtype, content: rename(block.content), checked: block.checked, attrs });
      for (const child of block.children ?? []) visit(child);
    };
    visit(roots.get(doc.id)!);
    out[doc.path] = flat;
  }
  return out;
}

describe('Obsidian vaults', () => {
  it('imports a vault: front matter, wiki links resolved after the whole folder, embeds, tags, callouts, attachments; says what it could not map', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Vault' });
    const vault = await writeVault();
    const result = await act<{ flavor: string; documents: number; obsidian: Record<string, unknown> & { unresolved: { file: string; link: string }[]; approximated: { file: string; link: string }[] } }>('import_markdown', { notebook: notebook.id, path: vault });
    expect(result.flavor).toBe('obsidian');
    expect(result.documents).toBe(6);
    expect(result.obsidian.unresolved).toEqual([{ file: 'Home.md', link: '[[Missing note]]' }]);
    // A block's identifier (`^abc123` ending it, `^tbl` on a line after it) is where a link to it points.
    expect(result.obsidian.approximated).toEqual([{ file: join('Projects', 'Alpha.md'), link: '[[Beta#^gone]]' }]);
    expect(result.obsidian).toMatchObject({ notes: 4, frontMatter: 2, embeds: 1, attachments: { linked: 4, copied: 3, reused: 0 } });
    const workspace = kernel.workspace.root;
    expect(await readFile(join(workspace, 'assets', 'diagram.png'))).toEqual(PNG);
    expect(await readFile(join(workspace, 'assets', 'paper.pdf'), 'utf8')).toBe('%PDF-1.4 a paper');

    const snap = await snapshot(act, notebook.id) as Record<string, { type: string; subtype?: string; content?: string; attrs: Record<string, string>; checked?: boolean }[]>;
    const home = snap.Home!;
    expect(home[0]!.attrs).toEqual({
      'custom-title': 'Home page', 'custom-tags': '["start","area/work"]', 'custom-status': 'draft', 'custom-count': '3', 'custom-flag': 'true',
      'custom-zip': '01234', 'custom-code': '"123"', 'custom-Due-Date': '2024-02-01', 'custom-aliases': '["Start"]', 'custom-frontmatter-keys': '{"custom-Due-Date":"Due Date"}',
    });
    const text = home.map((block) => block.content ?? '').join('\n');
    expect(text).toContain('See ((Projects/Alpha#0 "Projects/Alpha")), ((Beta#0 "the beta")), ((Projects/Alpha#1 "Alpha#Goals")) and ((Projects/Alpha#1 "the goals")).');
    expect(text).toContain('Also [[Missing note]] and ((Beta#0 "a markdown link")) and [the web](https://example.com/#x).');
    expect(text).toContain('Tags #inbox# and #area/work# and #读书#, not #123 or `#code` or a [[link in `code`]].');
    expect(text).toContain('![diagram.png](assets/diagram.png)');
    expect(text).toContain('![Pasted image 20240105.png](assets/Pasted%20image%2020240105.png)');
    expect(await readFile(join(workspace, 'assets', 'Pasted image 20240105.png'))).toEqual(Buffer.concat([PNG, Buffer.from('pasted')]));
    expect(text).toContain('A paper: [paper.pdf](assets/paper.pdf) and an embed [the paper](assets/paper.pdf) inline.');
    expect(home.find((block) => block.type === 'code')!.content).toBe('const link = "[[Beta]] #notatag";');
    const alpha = snap['Projects/Alpha']!;
    expect(alpha[1]).toMatchObject({ type: 'heading', content: 'Goals' });
    expect(alpha.find((block) => block.type === 'callout' && block.subtype === 'note')!.attrs).toEqual({ 'custom-callout': 'info', 'custom-callout-fold': '-', 'custom-callout-title': 'Details here' });
    expect(alpha.find((block) => block.type === 'callout' && block.subtype === 'warning')!.attrs).toEqual({});
    expect(alpha.find((block) => block.type === 'embed')!.content).toBe('((Beta#0 "Beta"))');
    expect(alpha.map((block) => block.content ?? '').join('\n')).toContain('Ship it. Linked from ((Beta#0 "Beta")) inline.');
    const item = alpha.findIndex((block) => block.content === 'done');
    expect(alpha.map((block) => block.content ?? '').join('\n')).toContain(`See ((Beta#1 "Beta#^abc123")), the table ((Beta#2 "Beta#^tbl")), the item ((Projects/Alpha#${item} "Alpha#^item-1")) and ((Beta#0 "Beta#^gone")).`);
    expect(alpha[item]!.attrs).toMatchObject({ 'custom-obsidian-block-id': 'item-1' });
    expect(snap.Beta!.slice(1, 3)).toMatchObject([
      { type: 'paragraph', content: 'Some text', attrs: { 'custom-obsidian-block-id': 'abc123' } },
      { type: 'table', attrs: { 'custom-obsidian-block-id': 'tbl' } },
    ]);
    expect(snap.Beta!.some((block) => block.content === '^tbl')).toBe(false);
    const tags = await act<{ tags: { tag: string }[] }>('tag_list', {});
    expect(tags.tags.map((tag) => tag.tag).sort()).toEqual(['area/work', 'inbox', 'quoted', 'todo', '读书'].sort());
    expect(snap['Daily/2024-01-05']![0]!.attrs).toEqual({ 'custom-mood': '😀' });
  });

  it('round trip: a vault imported, exported as Obsidian and imported again gives the same blocks', async () => {
    const { act } = await boot();
    const first = await act<Created>('notebook_create', { name: 'First' });
    await act('import_markdown', { notebook: first.id, path: await writeVault() });
    const out = join(await tempDir(), 'exported vault');
    const exported = await act<{ files: number; obsidian: Record<string, unknown> }>('export_markdown', { id: first.id, folder: out, flavor: 'obsidian' });
    expect(exported.files).toBe(6);
    expect(exported.obsidian).toMatchObject({ attachments: { linked: 3, copied: 3 }, outside: 0 });
    expect((await stat(join(out, '.obsidian'))).isDirectory()).toBe(true);
    expect((await readdir(join(out, 'assets'))).sort()).toEqual(['Pasted image 20240105.png', 'diagram.png', 'paper.pdf']);
    const home = await readFile(join(out, 'Home.md'), 'utf8');
    expect(home.startsWith('---\naliases:\n  - Start\ncode: "123"\ncount: 3\nDue Date: 2024-02-01\nflag: true\n')).toBe(true);
    expect(home).toContain('See [[Alpha|Projects/Alpha]], [[Beta|the beta]], [[Alpha#Goals]] and [[Alpha#Goals|the goals]].');
    expect(home).toContain('Tags #inbox and #area/work and #读书');
    expect(home).toContain('![[diagram.png]]');
    expect(home).toContain('![[Pasted image 20240105.png]]');
    const alpha = await readFile(join(out, 'Projects', 'Alpha.md'), 'utf8');
    expect(alpha).toContain('> [!INFO]- Details here');
    expect(alpha).toContain('![[Beta]]');
    expect(alpha).toContain('- [x] done ^item-1');
    expect(alpha).toContain('See [[Beta#^abc123]], the table [[Beta#^tbl]], the item [[Alpha#^item-1]] and [[Beta|Beta#^gone]].');
    expect(await readFile(join(out, 'Beta.md'), 'utf8')).toMatch(/^Some text \^abc123\n\n\| a \| b \|\n[^]*\| 1 \| 2 \|\n\n\^tbl\n/);

    const second = await act<Created>('notebook_create', { name: 'Second' });
    const again = await act<{ flavor: string; obsidian: { attachments: { reused: number } } }>('import_markdown', { notebook: second.id, path: out });
    expect(again.flavor).toBe('obsidian');
    expect(again.obsidian.attachments.reused).toBe(3);
    expect(await snapshot(act, second.id)).toEqual(await snapshot(act, first.id));
  });

  it('from the CLI: quire import reports what it mapped and what not; quire export --obsidian writes a vault', async () => {
    const workspace = join(await tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    await act<Created>('notebook_create', { name: 'Notes' });
    await kernel.close();
    const io = bufferIO();
    // Some links are not in the vault: the import says so and exits 0 (nothing was skipped).
    expect(await runCli(['import', await writeVault(), '--notebook', 'notes', '--workspace', workspace], io)).toBe(0);
    expect(io.outText()).toMatch(/^imported 6 document\(s\), \d+ block\(s\) in [\d.]+ s \(obsidian\)\n  \d+ links, 1 embeds, \d+ tags, front matter in 2 notes, 3 attachments copied\n  1 links to notes not in the vault \(kept as text\), 1 to blocks or headings the notes do not have \(pointing at the note\)\n    Home.md: \[\[Missing note\]\]$/);
    const out = join(await tempDir(), 'out');
    const exported = bufferIO();
    expect(await runCli(['export', 'Notes', out, '--obsidian', '--workspace', workspace], exported)).toBe(0);
    expect(await readFile(join(out, 'Projects', 'Alpha.md'), 'utf8')).toContain('> [!INFO]- Details here');
    expect((await readdir(join(out, 'assets'))).sort()).toEqual(['Pasted image 20240105.png', 'diagram.png', 'paper.pdf']);
  });

  it('plain Markdown folders are not read as Obsidian unless asked', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Plain' });
    const folder = await tempDir('quire-plain-');
    await writeFile(join(folder, 'A.md'), 'Text #notatag and [[B]]\n');
    await writeFile(join(folder, 'B.md'), 'B\n');
    const plain = await act<{ flavor: string }>('import_markdown', { notebook: notebook.id, path: folder });
    expect(plain.flavor).toBe('markdown');
    const asked = await act<{ flavor: string; obsidian: { links: number; tags: number } }>('import_markdown', { notebook: notebook.id, path: folder, flavor: 'obsidian' });
    expect(asked.obsidian).toMatchObject({ links: 1, tags: 1 });
  });
});

describe('Obsidian notes with hostile lines', () => {
  const nowhere = { note: () => undefined, heading: () => undefined, block: () => undefined, attachment: () => undefined };
  const LONG = 300_000;

  // Each of these lines took each expression time quadratic in its length (minutes at this size, the
  // kernel's event loop held): they now convert in one pass.
  it.each([
    ['a tag of slashes never closed', ` #${'/'.repeat(LONG)}#`],
    ['brackets never closed', '['.repeat(LONG)],
    ['links never closed', '[a]('.repeat(LONG / 4)],
    ['wiki links never closed', '[[a'.repeat(LONG / 3)],
    // Each run of backticks searched the rest of the line for its partner: n^1.5 (1 MB took 1.5 s, 8 MB minutes).
    ['backtick runs of 4,000 distinct lengths', Array.from({ length: 4_000 }, (_, k) => `${'`'.repeat(k + 1)}x`).join('')],
    ['HTML tags never closed', '<a '.repeat(LONG / 3)],
    ['HTML comments never closed', '<!--'.repeat(LONG / 4)],
    ['link labels never closed', '[a #b'.repeat(LONG / 5)],
    ['escaped brackets after one open', `[${'\\['.repeat(LONG / 2)}`],
  ])('converts a note holding %s', (_name, line) => {
    const converted = convertObsidianNote(`intro\n\n${line}\n`, 'note.md', nowhere);
    expect(converted.markdown.length).toBeGreaterThanOrEqual(line.length);
  });

  it('reads the headings of a note whose heading is a long line of blanks', () => {
    const vault = new ObsidianVault('/vault', [{ id: '20240101120000-aaaaaaa', file: 'note.md' }], []);
    vault.addHeadings('20240101120000-aaaaaaa', `# a${' '.repeat(LONG)}b\n\n## Closing ##  \n`);
    expect(vault.heading('20240101120000-aaaaaaa', 'Closing')).toBeDefined();
  });

  it('exports a note whose text is a tag of slashes never closed, or an asset link never closed', () => {
    const report = newExportReport();
    for (const line of [`#${'/'.repeat(LONG)}a #`, '[a](assets/'.repeat(LONG / 11)]) {
      expect(toObsidianMarkdown(line, { target: () => undefined }, report).length).toBeGreaterThan(0);
    }
  });

  it('plans an import around a note it cannot read (removed after the listing): the parse says why, the other notes come in', async () => {
    const vault = await writeVault();
    const home = join(vault, 'Home.md');
    const notes = [{ id: '20240101120000-aaaaaaa', path: home }, { id: '20240101120000-bbbbbbb', path: join(vault, 'Gone.md') }];
    const call = { stopped: undefined } as unknown as ActionCall;
    const plan = await planObsidianImport(call, vault, notes, [], join(vault, '..', 'assets-out'), 1_000_000);
    const gone = await plan.work({ id: '20240101120000-bbbbbbb', title: 'Gone', path: join(vault, 'Gone.md') });
    expect(gone).toEqual({ id: '20240101120000-bbbbbbb', title: 'Gone', path: join(vault, 'Gone.md') });
    expect((await plan.work({ id: '20240101120000-aaaaaaa', title: 'Home', path: home })).markdown).toContain('# Welcome');
  });

  it('resolves links by file name, in another Unicode form, and with a table\'s escaped bar; writes that bar back in tables', () => {
    const vault = new ObsidianVault('/vault', [{ id: '20240101120000-aaaaaaa', file: '/vault/Home.md' }, { id: '20240101120000-bbbbbbb', file: '/vault/Cafe\u0301.md' }], []);
    const converted = convertObsidianNote('See [[Home.md]] and [[Caf\u00e9]].\n\n| a | b |\n| - | - |\n| [[Home\\|the home]] | x |\n', '/vault/x.md', vault);
    expect(converted.report.unresolved).toEqual([]);
    expect(converted.markdown).toBe('See ((20240101120000-aaaaaaa "Home")) and ((20240101120000-bbbbbbb "Caf\u00e9")).\n\n| a | b |\n| - | - |\n| ((20240101120000-aaaaaaa "the home")) | x |\n');
    const out = toObsidianMarkdown('| a |\n| - |\n| ((20240101120000-aaaaaaa "the home")) |\n\nand ((20240101120000-aaaaaaa "x"))\n', { target: () => ({ note: 'Home', isDocument: true }) }, newExportReport());
    expect(out).toBe('| a |\n| - |\n| [[Home\\|the home]] |\n\nand [[Home|x]]\n');
  });

  it('finds attachments linked in pointy brackets or with parentheses in their names, and writes links that read back whole', () => {
    const vault = new ObsidianVault('/vault', [], ['/vault/img/My Image.png', '/vault/img/Screenshot (1).png']);
    const converted = convertObsidianNote('![a](<img/My Image.png>) ![b](img/Screenshot%20\\(1\\).png "t") ![[Screenshot (1).png]]\n', '/vault/x.md', vault);
    expect(converted.report.unresolved).toEqual([]);
    expect(converted.markdown).toBe('![a](assets/My%20Image.png) ![b](assets/Screenshot%20%281%29.png) ![Screenshot (1).png](assets/Screenshot%20%281%29.png)\n');
    const report = newExportReport();
    expect(toObsidianMarkdown(converted.markdown, { target: () => undefined }, report)).toBe('![[My Image.png|a]] ![[Screenshot (1).png|b]] ![[Screenshot (1).png]]\n');
    expect([...report.assets]).toEqual(['My Image.png', 'Screenshot (1).png']);
  });

  it('leaves alone what only looks like a tag in HTML, inline math and comments, as in code', () => {
    const note = '<span style="color: #ff0000">#red</span> $a #b$ `#c` %% private #todo %% #d and $5 to $6 #e\n%% a comment\nof #two lines %% #f\n';
    const converted = convertObsidianNote(note, 'note.md', nowhere);
    expect(converted.markdown).toBe('<span style="color: #ff0000">#red#</span> $a #b$ `#c` %% private #todo %% #d# and $5 to $6 #e#\n%% a comment\nof #two lines %% #f#\n');
    expect(converted.report.tags).toBe(4);
    // A link's text holds no tags: a wiki link's alias (now a reference's anchor), a Markdown link's label.
    const vault = new ObsidianVault('/vault', [{ id: '20240101120000-aaaaaaa', file: '/vault/Note.md' }], []);
    expect(convertObsidianNote('[[Note|see #todo]] and [a #b](https://x.y) #c\n', '/vault/x.md', vault).markdown).toBe('((20240101120000-aaaaaaa "see #todo")) and [a #b](https://x.y) #c#\n');
    // A `<` in prose is no tag: what follows it is still read.
    expect(convertObsidianNote('if x<y then #t and z>w, a < b #u\n', 'note.md', nowhere).markdown).toBe('if x<y then #t# and z>w, a < b #u#\n');
  });

  it('writes a block a reference points at with its id as an Obsidian block identifier, and reads the link back to it', async () => {
    const { act } = await boot();
    const first = await act<Created>('notebook_create', { name: 'Native' });
    const target = await act<Created>('document_create', { notebook: first.id, title: 'Target', markdown: 'Target paragraph.\n\n```js\nlet x = 1;\n```\n\n- an item' });
    const blocks = (await act<{ document: Block }>('document_get', { id: target.id })).document.children!;
    const [paragraph, code] = blocks.map((block) => block.id);
    const item = blocks[2]!.children![0]!.id;
    // Anchors holding a `#` (links to headings) make no tag between them.
    await act('document_create', { notebook: first.id, title: 'Source', markdown: `See ((${paragraph} "the target")), ((${code} "the code")) and ((${item} "the item")); ((${target.id} "Target#One")) and ((${target.id} "Target#Two")).` });
    expect((await act<{ tags: unknown[] }>('tag_list', {})).tags).toEqual([]);
    const out = join(await tempDir(), 'native vault');
    const exported = await act<{ obsidian: { approximated: number } }>('export_markdown', { id: first.id, folder: out, flavor: 'obsidian' });
    expect(exported.obsidian.approximated).toBe(0);
    const itemParagraph = blocks[2]!.children![0]!.children![0]!.id;
    expect(await readFile(join(out, 'Target.md'), 'utf8')).toBe(`Target paragraph. ^${paragraph}\n\n\`\`\`js\nlet x = 1;\n\`\`\`\n\n^${code}\n\n- an item ^${itemParagraph}\n`);
    expect(await readFile(join(out, 'Source.md'), 'utf8')).toContain(`See [[Target#^${paragraph}|the target]], [[Target#^${code}|the code]] and [[Target#^${itemParagraph}|the item]]`);

    const second = await act<Created>('notebook_create', { name: 'Back' });
    await act('import_markdown', { notebook: second.id, path: out });
    const docs = (await act<Listed>('document_list', { notebook: second.id })).documents;
    const back = (await act<{ document: Block }>('document_get', { id: docs.find((doc) => doc.title === 'Target')!.id })).document.children!;
    const source = (await act<{ document: Block }>('document_get', { id: docs.find((doc) => doc.title === 'Source')!.id })).document.children![0]!.content!;
    expect(back.map((block) => [block.type, block.content ?? ''])).toEqual([['paragraph', 'Target paragraph.'], ['code', 'let x = 1;'], ['list', '']]);
    expect(source).toContain(`See ((${back[0]!.id} "the target")), ((${back[1]!.id} "the code")) and ((${back[2]!.children![0]!.children![0]!.id} "the item"))`);
  });

  it('finds only the block identifiers a block of the note takes, so no link leads to a block that is not there', () => {
    const cases: [string, string[]][] = [
      ['Para one\n^abc', ['abc']], ['- item\n^abc', ['abc']], ['^abc\n\ntext', []], ['Para ^abc\n2. next', []], ['Para ^abc\n    - x', []],
      ['Windows para ^win-key\r\n\r\nNext', ['win-key']], ['1. a ^k\n2. b', ['k']], ['Para ^abc\n# H', ['abc']], ['x\n\n| a |\n| - |\n| 1 |\n\n^tbl', ['tbl']],
    ];
    for (const [text, keys] of cases) {
      const found = [...blockKeysOf(text)];
      // As the import parses them: without ids of their own yet.
      const drafts = markdownToBlocks(text, () => '');
      const unset = (list: { id?: string; children?: unknown[] }[]): void => list.forEach((draft) => { delete draft.id; unset((draft.children ?? []) as typeof list); });
      unset(drafts);
      expect([text, found, assignBlockIds(drafts, new Map(found.map((key) => [key, `id-${key}`])))]).toEqual([text, keys, []]);
    }
  });

  it('converts a tag after a link to a block, and never pairs a tag\'s # inside a link', () => {
    const targets = { target: (id: string) => ({ note: 'A', isDocument: false, block: id }) };
    expect(toObsidianMarkdown('See ((20240101000000-abcdefg "x")) about #todo# now; #123 then #review#', targets, newExportReport())).toBe('See [[A#^20240101000000-abcdefg|x]] about #todo now; #123 then #review');
    // A line that only looks like a fence (a backtick after its run, a `$` after its `$$`) is prose: what follows it is converted.
    expect(toObsidianMarkdown('```c`` is code\n\n$$E=mc^2$$ is famous\n\nSee #todo#\n', targets, newExportReport())).toBe('```c`` is code\n\n$$E=mc^2$$ is famous\n\nSee #todo\n');
  });

  it('writes tags so that Obsidian reads the same ones back: none made of plain #words, none lost when glued to text', () => {
    const targets = { target: () => undefined };
    const cases: [string, string][] = [
      // A #word that is no Quire tag is escaped (Obsidian would read a tag there); a tag glued to text keeps Quire's
      // spelling (Obsidian reads `#重要` after a letter as no tag); one after a code span too.
      ['Channel #general is busy', 'Channel \\#general is busy'],
      ['会議#重要# and (#tag#)', '会議#重要# and (#tag)'],
      ['`code`#x# then #y#', '`code`#x# then #y'],
      // Nothing escaped in a link's text or target, where the import reads no tags either.
      ['[Jump](#section) and [see #general](https://x.example)', '[Jump](#section) and [see #general](https://x.example)'],
    ];
    for (const [quire, obsidian] of cases) {
      const written = toObsidianMarkdown(quire, targets, newExportReport());
      expect([quire, written]).toEqual([quire, obsidian]);
      expect(parseTags(convertObsidianNote(written, 'note.md', nowhere).markdown)).toEqual(parseTags(quire));
    }
  });

  it('reads a note saved with Windows line ends: a code fence closes on its line, and what follows it is converted', () => {
    expect(convertObsidianNote('```\r\ncode #no\r\n```\r\n\r\nSee #tag\r\n', 'note.md', nowhere).markdown).toBe('```\r\ncode #no\r\n```\r\n\r\nSee #tag#\r\n');
  });

  it('leaves a link to a heading of the same note as it is, no tag made of it', () => {
    const converted = convertObsidianNote('[Jump](#section) and #real\n', 'note.md', nowhere);
    expect(converted.markdown).toBe('[Jump](#section) and #real#\n');
    expect(converted.report.tags).toBe(1);
  });
});
