import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { filesUnder, skillMd, useSkills, writeTree } from './skills-harness.js';

const { boot } = useSkills();

interface Versions { versions: { version: string }[] }

describe('skills that are broken, tampered with, or given files that cannot all be written', () => {
  it('fixes a broken skill keeping its other files and a version of it, and installs over it only with replace', async () => {
    const { kernel, skill } = await boot();
    const folder = join(kernel.workspace.root, 'skills', 'notes-digest');
    await writeTree(folder, { 'SKILL.md': '---\nname: notes-digest\ndescription: [unclosed\n---\n\nBody\n', 'references/style.md': 'Keep it short.' });
    const failure = await caught(skill('install', { path: await packageOf(kernel.workspace.root) }));
    expect(failure).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('broken') });
    await skill('save', { name: 'notes-digest', content: skillMd('name: notes-digest\ndescription: Digest the notes of a week.') });
    expect(await filesUnder(folder)).toEqual(['SKILL.md', 'references/style.md']);
    const { versions } = await skill<Versions>('versions', { name: 'notes-digest' });
    expect(versions).toHaveLength(1);
  });

  it('refuses to restore a version whose file names a path outside the skill, and writes nothing', async () => {
    const { kernel, skill } = await boot();
    await skill('save', { name: 'weekly', content: skillMd('name: weekly\ndescription: A weekly review.') });
    await skill('save', { name: 'weekly', content: skillMd('name: weekly\ndescription: A weekly review, second.') });
    const { versions } = await skill<Versions>('versions', { name: 'weekly' });
    const folder = join(kernel.workspace.root, 'history', 'skills', 'weekly');
    const file = join(folder, (await readdir(folder)).find((name) => name.startsWith(versions[0]!.version))!);
    const kept = JSON.parse(await readFile(file, 'utf8')) as { files: { path: string; encoding: string; data: string }[] };
    kept.files.push({ path: '../../escaped.txt', encoding: 'utf8', data: 'outside' });
    await writeFile(file, JSON.stringify(kept));
    const failure = await caught(skill('restore_version', { name: 'weekly', version: versions[0]!.version }));
    expect(failure).toMatchObject({ code: 'INVALID_INPUT', details: expect.objectContaining({ problem: 'PATH_ESCAPES' }) });
    expect(existsSync(join(kernel.workspace.root, 'escaped.txt'))).toBe(false);
    await writeFile(file, '{ not json');
    expect((await caught(skill('restore_version', { name: 'weekly', version: versions[0]!.version }))).details).toMatchObject({ problem: 'VERSION_INVALID' });
    // A version file that lists files but not what it was (a damaged or hand-made one) is passed over in
    // the listing, not a 500 that hid every version; so is one kept under another version's name.
    await writeFile(file, JSON.stringify({ files: [] }));
    await writeFile(join(folder, '20250101T000000000Z-save.json'), JSON.stringify({ ...kept, version: '20240101T000000000Z-save' }));
    expect((await skill<Versions>('versions', { name: 'weekly' })).versions).toEqual([]);
    expect((await caught(skill('restore_version', { name: 'weekly', version: versions[0]!.version }))).details).toMatchObject({ problem: 'VERSION_INVALID' });
  });

  it('refuses, naming them, files of which one is a folder of another or two differ only in case', async () => {
    const { skill } = await boot();
    const content = skillMd('name: clash\ndescription: Files that clash.');
    for (const files of [{ a: 'x', 'a/b': 'y' }, { 'notes.md': 'x', 'Notes.md': 'y' }]) {
      const failure = await caught(skill('save', { name: 'clash', content, files }));
      expect(failure).toMatchObject({ code: 'INVALID_INPUT', details: expect.objectContaining({ problem: 'PATH_DUPLICATE' }) });
    }
  });
});

/** A folder holding one valid skill named notes-digest, to install from. */
async function packageOf(root: string): Promise<string> {
  const folder = join(root, '..', 'package');
  await mkdir(folder, { recursive: true });
  await writeTree(folder, { 'SKILL.md': skillMd('name: notes-digest\ndescription: Digest the notes.') });
  return folder;
}
