import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../helpers/harness.js';
import { useBlocks } from './blocks/blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Listed { snapshots: { id: string; tags: string[] }[] }

describe('snapshots when the workspace or the repository is damaged', () => {
  it('refuses a snapshot when a folder cannot be listed, instead of recording it empty', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Kept', markdown: 'text' });
    const before = await act<Listed>('snapshot_list', {});
    // skills/ as a file: its listing fails with ENOTDIR, as a folder unreadable or removed mid-walk would.
    const skills = join(kernel.workspace.root, 'skills');
    await rm(skills, { recursive: true, force: true });
    await writeFile(skills, 'not a folder');
    const failure = await caught(act('snapshot_create', { memo: 'cut short' }));
    expect(failure.message).toMatch(/Could not list .*skills/);
    expect((await act<Listed>('snapshot_list', {})).snapshots).toEqual(before.snapshots);
  });

  it('rolls back and diffs against now when the newest record is damaged, and names that record when it is asked for', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Kept', markdown: 'first text' });
    const older = await act<Created>('snapshot_create', { memo: 'older' });
    await act('document_create', { notebook: notebook.id, title: 'Later', markdown: 'later text' });
    const newest = await act<Created>('snapshot_create', { memo: 'newest' });
    const record = join(kernel.workspace.root, 'repo', 'snapshots', `${newest.id}.json`);
    await writeFile(record, (await readFile(record, 'utf8')).slice(0, 40));
    const failure = await caught(act('snapshot_get', { id: newest.id }));
    expect(failure.message).toContain(`snapshot '${newest.id}' does not parse`);
    const diff = await act<{ added: string[] }>('snapshot_diff', { from: older.id });
    expect(diff.added).toHaveLength(1);
    await act('snapshot_rollback', { id: older.id });
    const documents = (await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents;
    expect(documents.map((entry) => entry.id)).toEqual([doc.id]);
  });

  it('keeps both tags given to one snapshot at the same moment', async () => {
    const { act } = await boot();
    const snapshot = await act<Created>('snapshot_create', {});
    await Promise.all(['first', 'second', 'third'].map((tag) => act('snapshot_tag', { id: snapshot.id, tag })));
    const listed = (await act<Listed>('snapshot_list', {})).snapshots.find((entry) => entry.id === snapshot.id);
    expect(listed?.tags).toEqual(['first', 'second', 'third']);
  });
});
