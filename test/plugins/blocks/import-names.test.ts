import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFrontMatter, writeFrontMatter } from '../../../plugins/blocks/obsidian/front-matter.js';
import { useBlocks } from './blocks-harness.js';

interface Created { id: string }

describe('names an import and an export keep as written', () => {
  const { boot, tempDir } = useBlocks();

  it('keeps a front matter property named __proto__ (or constructor) through an import and an Obsidian export', async () => {
    const read = readFrontMatter('---\n__proto__: kept\nconstructor: also\ntitle: T\n---\nbody\n');
    expect(writeFrontMatter(read.attrs)).toBe('---\n__proto__: kept\nconstructor: also\ntitle: T\n---\n');
    // A kept name that is not text (the attribute edited by hand) is not written as a key: the attribute's own name is.
    expect(writeFrontMatter({ 'custom-a': 'y', 'custom-frontmatter-keys': '{"custom-a": 5}' })).toBe('---\na: y\n---\n');
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Vault' });
    const vault = join(await tempDir(), 'vault');
    await mkdir(join(vault, '.obsidian'), { recursive: true });
    await writeFile(join(vault, 'Note.md'), '---\n__proto__: kept\n---\nbody\n');
    await act('import_markdown', { notebook: notebook.id, path: vault });
    const out = join(await tempDir(), 'out');
    await act('export_markdown', { id: notebook.id, folder: out, flavor: 'obsidian' });
    expect(await readFile(join(out, 'Note.md'), 'utf8')).toMatch(/^---\n__proto__: kept\n---\n/);
  });

  it('says when a note\'s front matter does not parse (here an alias bomb), and keeps it as the note\'s text', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const folder = join(await tempDir(), 'posts');
    await mkdir(folder, { recursive: true });
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)];
    await writeFile(join(folder, 'Bomb.md'), `---\n${bomb.join('\n')}\n---\nbody of the bomb\n`);
    await writeFile(join(folder, 'Fine.md'), '---\ntitle: Fine\n---\nbody\n');
    const result = await act<{ skipped: { path: string; reason: string }[] }>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.skipped).toEqual([{ path: expect.stringMatching(/Bomb\.md$/), reason: expect.stringMatching(/^front matter is not valid YAML \(.+\): kept as the note's text$/) }]);
    const listed = await act<{ documents: { id: string; title: string }[] }>('document_list', { notebook: notebook.id });
    const id = listed.documents.find((doc) => doc.title === 'Bomb')!.id;
    const { markdown } = await act<{ markdown: string }>('document_get_markdown', { id });
    expect(markdown).toContain('a: &a [x, x, x');
    expect(markdown).toContain('body of the bomb');
  });

  it('titles a note whose file name holds a backslash with its whole name (on Linux a backslash is part of a name)', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const folder = join(await tempDir(), 'notes');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'either\\or.md'), 'text\n');
    await act('import_markdown', { notebook: notebook.id, path: folder });
    const listed = await act<{ documents: { title: string }[] }>('document_list', { notebook: notebook.id });
    expect(listed.documents.map((doc) => doc.title)).toEqual(['either\\or']);
  });

  it('lists a hidden note or folder it does not import as skipped, and leaves a vault\'s own folders out unsaid', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Vault' });
    const vault = join(await tempDir(), 'vault');
    await mkdir(join(vault, '.obsidian'), { recursive: true });
    // Syncthing's marker and a folder of pictures hold no note: listed, they made a clean import exit 1.
    await mkdir(join(vault, '.stfolder'), { recursive: true });
    await mkdir(join(vault, '.pictures'), { recursive: true });
    await writeFile(join(vault, '.pictures', 'a.png'), 'png');
    await mkdir(join(vault, '.drafts'), { recursive: true });
    await writeFile(join(vault, '.drafts', 'Plan.md'), 'plan\n');
    await writeFile(join(vault, '.secret.md'), 'secret\n');
    await writeFile(join(vault, 'Note.md'), 'note\n');
    const report = await act<{ documents: number; skipped: { path: string; reason: string }[] }>('import_markdown', { notebook: notebook.id, path: vault });
    expect(report.documents).toBe(1);
    expect(report.skipped).toEqual([
      { path: join(vault, '.drafts'), reason: 'hidden (its name starts with a dot): the notes in it are not imported' },
      { path: join(vault, '.secret.md'), reason: 'hidden (its name starts with a dot): not imported' },
    ]);
  });
});
