import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IntentJournal } from '../../../core/fs/intent-journal.js';
import { useHarness } from '../../helpers/harness.js';

describe('IntentJournal', () => {
  const { tempDir } = useHarness();
  it('replays changes in the order they were begun, even hundreds within one millisecond', async () => {
    const dir = await tempDir('quire-journal-');
    const journal = new IntentJournal<{ n: number }>(dir);
    const begun = Array.from({ length: 300 }, (_, n) => n);
    for (const n of begun) await journal.begin({ n });
    expect((await journal.pending()).map(({ intent }) => intent.n)).toEqual(begun);
  });

  it('reads records named by an older kernel, before newer ones of the same second, and marks them done', async () => {
    const dir = await tempDir('quire-journal-');
    const journal = new IntentJournal<{ n: number }>(dir);
    await writeFile(join(dir, '20261130000000-zzzzzzz.json'), JSON.stringify({ n: 1 }));
    await writeFile(join(dir, '20261130000000000-000000.json'), JSON.stringify({ n: 2 }));
    await writeFile(join(dir, 'not-a-record.json'), '{}');
    const pending = await journal.pending();
    expect(pending.map(({ intent }) => intent.n)).toEqual([1, 2]);
    for (const { id } of pending) await journal.done(id);
    expect(await readdir(dir)).toEqual(['not-a-record.json']);
  });

  it('sweeps the temporary file of a record a crash cut short while it was written: that change was never begun', async () => {
    const dir = await tempDir('quire-journal-');
    const journal = new IntentJournal<{ n: number }>(dir);
    await journal.begin({ n: 1 });
    await writeFile(join(dir, '.20261202090224138-000000.json.f15af2fb79ee.tmp'), '{"n": 2');
    expect((await journal.pending()).map(({ intent }) => intent.n)).toEqual([1]);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
