import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileAtomic, linkOrCopyExclusive } from '../../../core/index.js';
import { copyUnlessSame } from '../../../plugins/blocks/file-digest.js';

describe('copying an attachment into place', () => {
  const folders: string[] = [];
  afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }); });

  async function files(): Promise<{ a: string; b: string; target: string }> {
    const folder = await mkdtemp(join(tmpdir(), 'quire-copy-'));
    folders.push(folder);
    await writeFile(join(folder, 'a.png'), 'the bytes of a');
    await writeFile(join(folder, 'b.png'), 'the bytes of b');
    return { a: join(folder, 'a.png'), b: join(folder, 'b.png'), target: join(folder, 'image.png') };
  }

  it('puts one of two copies asked at once to a missing name, and says the other found other bytes there', async () => {
    const { a, b, target } = await files();
    const outcomes = await Promise.all([copyUnlessSame(a, target), copyUnlessSame(b, target)]);
    expect([...outcomes].sort()).toEqual(['copied', 'different']);
    expect(await readFile(target, 'utf8')).toBe(outcomes[0] === 'copied' ? 'the bytes of a' : 'the bytes of b');
  });

  it('refuses an exclusive copy onto a file that is there, leaving it as it was', async () => {
    const { a, b, target } = await files();
    await copyFileAtomic(a, target);
    await expect(copyFileAtomic(b, target, { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(target, 'utf8')).toBe('the bytes of a');
  });

  it('puts a file in place where no hard link can be made (another file system), and still refuses one that is there', async () => {
    const { a, b } = await files();
    const elsewhere = await mkdtemp(join('/dev/shm', 'quire-copy-'));
    folders.push(elsewhere);
    const target = join(elsewhere, 'image.png');
    await linkOrCopyExclusive(a, target);
    expect(await readFile(target, 'utf8')).toBe('the bytes of a');
    await expect(linkOrCopyExclusive(b, target)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(target, 'utf8')).toBe('the bytes of a');
  });
});
