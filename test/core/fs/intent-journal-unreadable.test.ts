import { readdir } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { useHarness } from '../../helpers/harness.js';

// A record that cannot be read (EIO, or EACCES for a kernel not running as root): tests run as root,
// where no mode makes a file unreadable, so the read is made to fail.
const failing = vi.hoisted(() => ({ name: undefined as string | undefined }));
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  return {
    ...real,
    readFile: ((path: Parameters<typeof real.readFile>[0], options?: Parameters<typeof real.readFile>[1]) => {
      if (failing.name !== undefined && String(path).endsWith(failing.name)) return Promise.reject(Object.assign(new Error('i/o error'), { code: 'EIO' }));
      return real.readFile(path, options);
    }) as typeof real.readFile,
  };
});

const { IntentJournal } = await import('../../../core/fs/intent-journal.js');

describe('IntentJournal, a record that cannot be read', () => {
  const { tempDir } = useHarness();

  it('stops the start naming the record, and keeps it: the change it names may be half done', async () => {
    const dir = await tempDir('quire-journal-');
    const journal = new IntentJournal<{ n: number }>(dir);
    const id = await journal.begin({ n: 1 });
    failing.name = `${id}.json`;
    try {
      await expect(journal.pending()).rejects.toMatchObject({ code: 'WORKSPACE_INVALID', message: expect.stringContaining(`${id}.json`) });
    } finally {
      failing.name = undefined;
    }
    expect(await readdir(dir)).toContain(`${id}.json`);
    expect((await journal.pending()).map(({ intent }) => intent.n)).toEqual([1]);
  });
});
