import { chmod, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { makeTarGz, makeZip } from './archive-builders.js';
import { readSkillFolder } from '../../../plugins/skills/skill-paths.js';
import { filesUnder, skillMd, useSkills, writeTree } from './skills-harness.js';

const { boot, tempDir } = useSkills();

/** A skill as Claude Code writes them: extra front-matter fields, a script with a shebang, a reference file. */
const FOREIGN_SKILL_MD = `---
name: pdf-processing
description: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files or when the user mentions PDFs, forms, or document extraction.
allowed-tools: Read, Grep, Glob, Bash(python:*)
license: Complete terms in LICENSE.txt
metadata:
  version: "1.2"
  author: example-org
# a comment the author left
---

# PDF Processing

## Quick start

Use pdfplumber to extract text:

\`\`\`python
import pdfplumber
with pdfplumber.open("doc.pdf") as pdf:
    text = pdf.pages[0].extract_text()
\`\`\`

For form filling, see [FORMS.md](FORMS.md). Run \`scripts/extract.py\` for tables.
`;
const FOREIGN_BODY = FOREIGN_SKILL_MD.slice(FOREIGN_SKILL_MD.indexOf('# PDF Processing'));

describe('SKILL.md as other tools write it', () => {
  it('loads a Claude Code skill unchanged: extra fields kept, the body exact, its script listed as inert, nothing rewritten', async () => {
    const source = await tempDir();
    await writeTree(source, { 'pdf-processing/SKILL.md': FOREIGN_SKILL_MD, 'pdf-processing/FORMS.md': '# Forms\n', 'pdf-processing/scripts/extract.py': '#!/usr/bin/env python3\nprint("tables")\n', 'pdf-processing/LICENSE.txt': 'MIT\n' });
    await chmod(join(source, 'pdf-processing/scripts/extract.py'), 0o755);
    const { kernel, skill } = await boot({}, join(source, 'ws'));
    // Put in the workspace by hand, as a person copying a skill folder would.
    await writeTree(join(kernel.workspace.root, 'skills'), { 'pdf-processing/SKILL.md': FOREIGN_SKILL_MD, 'pdf-processing/FORMS.md': '# Forms\n', 'pdf-processing/scripts/extract.py': '#!/usr/bin/env python3\nprint("tables")\n' });
    const list = await skill<{ skills: { name: string; scripts: string[]; warnings: string[]; tokens: number; inPrompt: boolean }[]; broken: unknown[] }>('list');
    expect(list.broken).toEqual([]);
    expect(list.skills).toHaveLength(1);
    expect(list.skills[0]).toMatchObject({ name: 'pdf-processing', scripts: ['scripts/extract.py'], inPrompt: true });
    expect(list.skills[0]!.warnings[0]).toMatch(/scripts.*inert here/);
    expect(list.skills[0]!.tokens).toBeGreaterThan(20);
    const loaded = await skill<{ body: string; files: string[]; warnings: string[] }>('load', { name: 'pdf-processing' });
    expect(loaded.body).toBe(FOREIGN_BODY);
    expect(loaded.files).toEqual(['FORMS.md', 'scripts/extract.py']);
    expect(loaded.warnings.join(' ')).toMatch(/allowed-tools is not applied here/);
    expect((await skill<{ text: string }>('load', { name: 'pdf-processing', file: 'FORMS.md' })).text).toBe('# Forms\n');
    expect(await readFile(join(kernel.workspace.root, 'skills/pdf-processing/SKILL.md'), 'utf8')).toBe(FOREIGN_SKILL_MD);

    // Installed from the folder: the same bytes, and the script written without its executable bits.
    await skill('remove', { name: 'pdf-processing' });
    const installed = await skill<{ installed: { name: string; files: string[]; warnings: string[] }[] }>('install', { path: join(source, 'pdf-processing') });
    expect(installed.installed[0]).toMatchObject({ name: 'pdf-processing', files: ['FORMS.md', 'LICENSE.txt', 'SKILL.md', 'scripts/extract.py'] });
    expect(installed.installed[0]!.warnings[0]).toMatch(/inert/);
    expect(await readFile(join(kernel.workspace.root, 'skills/pdf-processing/SKILL.md'), 'utf8')).toBe(FOREIGN_SKILL_MD);
    const { mode } = await import('node:fs/promises').then(({ stat }) => stat(join(kernel.workspace.root, 'skills/pdf-processing/scripts/extract.py')));
    expect(mode & 0o111).toBe(0);
  });
});

interface Case {
  title: string;
  problem: string;
  /** Prepares the source under `dir` and says which action to call. */
  make(dir: string): Promise<{ action: string; input: Record<string, unknown> }>;
}

const folder = (files: Record<string, string>) => async (dir: string) => {
  await writeTree(join(dir, 'src'), files);
  return { action: 'install', input: { path: join(dir, 'src') } };
};
const archive = (name: string, data: Buffer) => async (dir: string) => {
  await writeFile(join(dir, name), data);
  return { action: 'install', input: { path: join(dir, name) } };
};
const good = skillMd('name: good\ndescription: A good skill.');

const CASES: Case[] = [
  { title: 'no front matter', problem: 'FRONT_MATTER_MISSING', make: folder({ 'SKILL.md': '# Just markdown\n' }) },
  { title: 'front matter never closed', problem: 'FRONT_MATTER_UNCLOSED', make: folder({ 'SKILL.md': '---\nname: x\ndescription: y\n\n# Body\n' }) },
  { title: 'bad YAML', problem: 'YAML_INVALID', make: folder({ 'SKILL.md': skillMd('name: [unclosed\ndescription: y') }) },
  { title: 'a YAML list instead of fields', problem: 'FRONT_MATTER_NOT_MAPPING', make: folder({ 'SKILL.md': skillMd('- name\n- description') }) },
  { title: 'missing name', problem: 'NAME_MISSING', make: folder({ 'SKILL.md': skillMd('description: Does things.') }) },
  { title: 'name with spaces', problem: 'NAME_INVALID', make: folder({ 'SKILL.md': skillMd('name: my skill\ndescription: Does things.') }) },
  { title: 'missing description', problem: 'DESCRIPTION_MISSING', make: folder({ 'SKILL.md': skillMd('name: no-description') }) },
  { title: 'description too long', problem: 'DESCRIPTION_TOO_LONG', make: folder({ 'SKILL.md': skillMd(`name: wordy\ndescription: ${'x'.repeat(1025)}`) }) },
  { title: 'body over the limit', problem: 'BODY_TOO_LARGE', make: folder({ 'SKILL.md': skillMd('name: long\ndescription: Long.', 'y'.repeat(2001)) }) },
  { title: 'a file path escaping the folder (save)', problem: 'PATH_ESCAPES', make: async () => ({ action: 'save', input: { name: 'good', content: good, files: { '../escaped.md': 'x' } } }) },
  { title: 'an archive entry with ../', problem: 'PATH_ESCAPES', make: archive('traversal.zip', makeZip([{ name: 'good/SKILL.md', data: good }, { name: 'good/../../evil.txt', data: 'x' }])) },
  { title: 'an archive entry with an absolute path', problem: 'PATH_ABSOLUTE', make: archive('absolute.tar.gz', makeTarGz([{ name: 'good/SKILL.md', data: good }, { name: '/tmp/evil.txt', data: 'x' }])) },
  { title: 'a symbolic link in a zip', problem: 'LINK', make: archive('link.zip', makeZip([{ name: 'good/SKILL.md', data: good }, { name: 'good/passwd', linkTarget: '/etc/passwd', mode: 0o120777 }])) },
  { title: 'a hard link in a tar', problem: 'LINK', make: archive('link.tar.gz', makeTarGz([{ name: 'good/SKILL.md', data: good }, { name: 'good/passwd', tarType: '1', linkTarget: '/etc/passwd' }])) },
  { title: 'a zip bomb by ratio', problem: 'ARCHIVE_RATIO', make: archive('bomb.zip', makeZip([{ name: 'good/SKILL.md', data: good }, { name: 'good/zeros.txt', data: Buffer.alloc(4 * 1024 * 1024) }])) },
  { title: 'a tar.gz bomb by ratio', problem: 'ARCHIVE_RATIO', make: archive('bomb.tar.gz', makeTarGz([{ name: 'good/SKILL.md', data: good }, { name: 'good/zeros.txt', data: Buffer.alloc(3 * 1024 * 1024) }])) },
  { title: 'a zip entry lying about its size', problem: 'ARCHIVE_CORRUPT', make: archive('liar.zip', makeZip([{ name: 'good/SKILL.md', data: good }, { name: 'good/big.txt', data: 'z'.repeat(5000) }], { declaredSize: (entry, real) => (entry.name.endsWith('big.txt') ? 10 : real) })) },
  { title: 'duplicate names in one package', problem: 'NAME_DUPLICATE', make: folder({ 'one/SKILL.md': skillMd('name: twin\ndescription: First.'), 'two/SKILL.md': skillMd('name: twin\ndescription: Second.') }) },
  { title: 'a folder holding a symbolic link', problem: 'LINK', make: async (dir) => {
    await writeTree(join(dir, 'src'), { 'SKILL.md': good });
    await symlink('/etc/passwd', join(dir, 'src', 'passwd'));
    return { action: 'install', input: { path: join(dir, 'src') } };
  } },
  { title: 'too many files', problem: 'TOO_MANY_FILES', make: folder(Object.fromEntries([['SKILL.md', good], ...Array.from({ length: 6 }, (_, i) => [`ref-${i}.md`, 'r'])])) },
  { title: 'no SKILL.md at all', problem: 'NO_SKILL', make: folder({ 'README.md': '# no skill\n' }) },
  { title: 'something that is no archive', problem: 'ARCHIVE_UNSUPPORTED', make: archive('notes.zip', Buffer.from('not an archive at all')) },
];

describe('malformed skills and packages', () => {
  it.each(CASES)('refuses $title with $problem and writes nothing', async ({ problem, make }) => {
    const dir = await tempDir();
    const { kernel, skill } = await boot({ maxBodyChars: 2000, maxSkillFiles: 5 }, join(dir, 'ws'));
    const before = await filesUnder(kernel.workspace.root);
    const { action, input } = await make(dir);
    const error = await caught(skill(action, input));
    expect(error.details?.problem, error.message).toBe(problem);
    expect(error.message.length).toBeGreaterThan(20);
    expect(await filesUnder(kernel.workspace.root)).toEqual(before);
    expect((await readdir(kernel.workspace.root)).filter((name) => name.includes('staging'))).toEqual([]);
  });

  it('gives each case its own error', () => {
    expect(new Set(CASES.map((entry) => `${entry.problem}:${entry.title}`)).size).toBe(CASES.length);
    expect(new Set(CASES.map((entry) => entry.problem)).size).toBeGreaterThanOrEqual(15);
  });

  it('lists broken skills of the workspace with their path and problem, never failing, and keeps the good ones', async () => {
    const dir = await tempDir();
    const root = join(dir, 'ws');
    await writeTree(join(root, 'skills'), {
      'good/SKILL.md': good,
      'Wrong-Folder/SKILL.md': skillMd('name: other-name\ndescription: Mismatch.'),
      'no-md/notes.txt': 'x',
      'bad-yaml/SKILL.md': skillMd('name: bad-yaml\ndescription: "unclosed'),
    });
    const extra = join(dir, 'extra');
    await writeTree(extra, { 'good/SKILL.md': skillMd('name: good\ndescription: The same name again.') });
    const { skill } = await boot({ paths: [extra] }, root);
    const list = await skill<{ skills: { name: string }[]; broken: { path: string; problem: string; message: string }[] }>('list');
    expect(list.skills.map((entry) => entry.name)).toEqual(['good']);
    expect(list.broken.map((entry) => [entry.path.replace(dir, '<dir>'), entry.problem])).toEqual([
      ['skills/Wrong-Folder', 'NAME_FOLDER_MISMATCH'],
      ['skills/bad-yaml', 'YAML_INVALID'],
      ['skills/no-md', 'NO_SKILL'],
      ['<dir>/extra/good', 'NAME_DUPLICATE'],
    ]);
    const load = await caught(skill('load', { name: 'good', file: '../bad-yaml/SKILL.md' }));
    expect(load.details?.problem).toBe('PATH_ESCAPES');
  });

  it('never reads a file of a skill through a link, nor a binary file', async () => {
    const dir = await tempDir();
    const root = join(dir, 'ws');
    await writeTree(join(root, 'skills'), { 'good/SKILL.md': good, 'good/blob.bin': Buffer.from([1, 0, 2]) });
    await mkdir(join(root, 'skills/good/refs'));
    await symlink('/etc/hostname', join(root, 'skills/good/refs/host.md'));
    const { skill } = await boot({}, root);
    expect((await caught(skill('load', { name: 'good', file: 'refs/host.md' }))).details?.problem).toBe('LINK');
    expect((await caught(skill('load', { name: 'good', file: 'blob.bin' }))).details?.problem).toBe('NOT_TEXT');
    expect((await caught(skill('load', { name: 'good', file: '/etc/passwd' }))).details?.problem).toBe('PATH_ABSOLUTE');
    const list = await skill<{ skills: { warnings: string[] }[] }>('list');
    expect(list.skills[0]!.warnings.join(' ')).toMatch(/symbolic links \(refs\/host.md\), never followed/);
  });
});

describe("reading a skill's folder", () => {
  it('holds each file in memory at its own size, not at the limit of a file', async () => {
    const folder = await tempDir();
    await writeTree(folder, { 'SKILL.md': skillMd('name: many-files\ndescription: A skill with many small files.'), ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`references/r${i}.md`, `reference ${i}`])) });
    const files = await readSkillFolder(folder, { maxSkillFiles: 200, maxSkillBytes: 5 * 1024 * 1024 }, () => new Error('too large'));
    expect(files).toHaveLength(51);
    for (const file of files!) {
      expect(file.data.toString()).toBe(await readFile(join(folder, file.path), 'utf8'));
      expect(file.data.buffer.byteLength).toBeLessThan(64 * 1024);
    }
  });
});
