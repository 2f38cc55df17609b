import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { caught } from '../../helpers/harness.js';

// A folder the kernel cannot read (EACCES for a kernel not running as root): tests run as root, where
// no mode makes a folder unreadable, so listing it is made to fail.
const failing = vi.hoisted(() => ({ folder: undefined as string | undefined }));
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  return {
    ...real,
    readdir: ((path: Parameters<typeof real.readdir>[0], options?: unknown) => {
      if (failing.folder !== undefined && String(path) === failing.folder) return Promise.reject(Object.assign(new Error('permission denied'), { code: 'EACCES' }));
      return (real.readdir as (p: unknown, o?: unknown) => Promise<unknown>)(path, options);
    }) as typeof real.readdir,
  };
});

const { useBlocks } = await import('./blocks-harness.js');
const { boot, tempDir } = useBlocks();

interface Created { id: string }

describe('a folder of documents that cannot be read', () => {
  it('is a problem of its own: the rest of the workspace works, and what holds it is not removed', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const locked = await first.act<Created>('notebook_create', { name: 'Locked' });
    const parent = await first.act<Created>('document_create', { notebook: locked.id, title: 'Parent', markdown: 'above' });
    await first.act('document_create', { notebook: locked.id, parentId: parent.id, title: 'Child', markdown: 'below' });
    const open = await first.act<Created>('notebook_create', { name: 'Open' });
    const elsewhere = await first.act<Created>('document_create', { notebook: open.id, title: 'Elsewhere', markdown: 'readable' });
    await first.kernel.close();
    failing.folder = join(workspace, 'data', locked.id, parent.id);
    try {
      const { act } = await boot({ workspace });
      expect((await act<{ markdown: string }>('document_get_markdown', { id: elsewhere.id })).markdown).toContain('readable');
      const { problems } = await act<{ problems: { path: string; reason: string }[] }>('index_problems', {});
      expect(problems).toEqual([{ path: `${locked.id}/${parent.id}/`, reason: expect.stringContaining('cannot be read (EACCES)') }]);
      expect((await caught(act('document_remove', { id: parent.id }))).code).toBe('CONFLICT');
    } finally {
      failing.folder = undefined;
    }
  });
});
