import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Which folders are opened to be synced (syncFolder opens a folder read-only, then syncs it).
const opened = vi.hoisted(() => ({ folders: [] as string[] }));
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  return {
    ...real,
    open: ((path: Parameters<typeof real.open>[0], flags?: Parameters<typeof real.open>[1], mode?: Parameters<typeof real.open>[2]) => {
      if (flags === 'r') opened.folders.push(String(path));
      return real.open(path, flags, mode);
    }) as typeof real.open,
  };
});

const { writeFileAtomic, replaceFile } = await import('../../../core/fs/atomic-write.js');

describe('a file written into folders that do not exist yet', () => {
  const roots: string[] = [];
  afterEach(async () => { for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true }); });

  it('syncs each new folder in its parent, so that a power cut cannot take the acknowledged file with its folder', async () => {
    const root = await mkdtemp(join(tmpdir(), 'quire-folders-'));
    roots.push(root);
    opened.folders.length = 0;
    await writeFileAtomic(join(root, 'notebook', 'parent', 'child.json'), '{}');
    expect(opened.folders).toEqual(expect.arrayContaining([root, join(root, 'notebook'), join(root, 'notebook', 'parent')]));
    opened.folders.length = 0;
    await replaceFile(join(root, 'other', 'doc.json'), '{}');
    expect(opened.folders).toContain(root);
  });
});
