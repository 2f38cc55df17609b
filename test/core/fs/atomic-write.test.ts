import { readdir, readFile, stat, writeFile, chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFileAtomic, writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../../../core/fs/atomic-write.js';
import { caught, useHarness } from '../../helpers/harness.js';

describe('atomic writes', () => {
  const harness = useHarness();

  it('replaces the file whole and leaves no temporary file behind', async () => {
    const folder = await harness.tempDir();
    const file = join(folder, 'doc.json');
    await writeFile(file, 'old');
    await writeJsonAtomic(file, { b: 1, a: [1, 2] });
    expect(await readFile(file, 'utf8')).toBe('{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n');
    expect(await readdir(folder)).toEqual(['doc.json']);
  });

  it('does the same with synchronous calls, leaving the old file when the target cannot be replaced', async () => {
    const folder = await harness.tempDir();
    const file = join(folder, 'sub', 'doc.json');
    writeFileAtomicSync(file, 'first', { mode: 0o600 });
    writeFileAtomicSync(file, 'second');
    expect(await readFile(file, 'utf8')).toBe('second');
    expect(await readdir(join(folder, 'sub'))).toEqual(['doc.json']);
    // A folder where the file should go cannot be renamed over: the write fails and no temporary file stays.
    await mkdir(join(folder, 'sub', 'taken'));
    expect(() => writeFileAtomicSync(join(folder, 'sub', 'taken'), 'x')).toThrow();
    expect((await readdir(join(folder, 'sub'))).sort()).toEqual(['doc.json', 'taken']);
  });

  it('creates the folder when needed and honours the file mode', async () => {
    const folder = await harness.tempDir();
    const file = join(folder, 'deep', 'er', 'secret');
    await writeFileAtomic(file, 'x', { mode: 0o600 });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('leaves the previous content intact when the write fails', async () => {
    const folder = await harness.tempDir();
    const locked = join(folder, 'locked');
    await mkdir(locked);
    const file = join(locked, 'doc.txt');
    await writeFile(file, 'previous');
    await chmod(locked, 0o500);
    try {
      // Root ignores folder permissions; only assert the failure where permissions apply.
      if (process.getuid?.() === 0) return;
      expect((await caught(writeFileAtomic(file, 'next'))).message).toBeTruthy();
      expect(await readFile(file, 'utf8')).toBe('previous');
    } finally {
      await chmod(locked, 0o700);
    }
  });

  it('copies a file over another whole, leaving no temporary file, and fails on a missing source with the target as it was', async () => {
    const folder = await harness.tempDir();
    const source = join(folder, 'source.bin');
    const target = join(folder, 'target.bin');
    await writeFile(source, Buffer.alloc(300_000, 7));
    await writeFile(target, 'old');
    await copyFileAtomic(source, target);
    expect((await readFile(target)).equals(await readFile(source))).toBe(true);
    expect((await readdir(folder)).sort()).toEqual(['source.bin', 'target.bin']);
    expect((await caught(copyFileAtomic(join(folder, 'missing.bin'), target))).message).toMatch(/ENOENT/);
    expect((await readFile(target)).equals(await readFile(source))).toBe(true);
    expect((await readdir(folder)).sort()).toEqual(['source.bin', 'target.bin']);
  });
});
