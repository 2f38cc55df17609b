import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_SERVICE, type SnapshotService } from '../../../core/turn/snapshot-service.js';
import { agent, useBlocks } from '../../plugins/blocks/blocks-harness.js';

/**
 * What the repository and the index say of the whole workspace (counts, a turn's notes of others'
 * removals and renames) reaches the agent only for the notebooks it may see: a notebook closed to it
 * (`agent: none`) is not told by its ids, nor by its size.
 */
const { boot } = useBlocks();
interface Created { id: string }

async function scene() {
  const { kernel, act } = await boot();
  const open = await act<Created>('notebook_create', { name: 'Open' });
  await act('document_create', { notebook: open.id, title: 'Open doc', markdown: 'one\n\ntwo' });
  const hidden = await act<Created>('notebook_create', { name: 'Hidden' });
  const hiddenDocs: string[] = [];
  for (let i = 0; i < 5; i++) hiddenDocs.push((await act<Created>('document_create', { notebook: hidden.id, title: `Hidden ${i}`, markdown: 'a\n\nb\n\nc' })).id);
  await act('notebook_set_privacy', { id: hidden.id, agent: 'none' });
  const seenByAgent = async <T,>(target: string, input: Record<string, unknown>): Promise<T> => act<T>(target, input, agent());
  return { kernel, act, open: open.id, hidden: hidden.id, hiddenDocs, seenByAgent };
}

describe('counts and notes of the whole workspace, asked by the agent', () => {
  it("index rebuild counts the notebooks, documents and blocks the agent may see, and the removals there", async () => {
    const { kernel, act, hidden, hiddenDocs, seenByAgent } = await scene();
    const whole = await act<Record<string, number>>('index_rebuild', {});
    expect(whole).toMatchObject({ notebooks: 2, documents: 6 });
    // A hidden document's file removed by hand: the rebuild takes it out of the index (a removal it counts).
    await rm(join(kernel.workspace.dataDir, hidden, `${hiddenDocs[0]}.json`));
    const seen = await seenByAgent<Record<string, unknown>>('index_rebuild', {});
    // One notebook of one document (its document block and two paragraphs); the removal was in the hidden one.
    expect(seen).toMatchObject({ notebooks: 1, documents: 1, indexed: 1, blocks: 3, removed: 0 });
    expect(JSON.stringify(seen)).not.toContain(hidden);
  });

  it("snapshot create, list and get tell the agent of the files and the others' removals in the notebooks it may see only", async () => {
    const { kernel, act, open, hidden, hiddenDocs, seenByAgent } = await scene();
    const snapshots = kernel.container.resolve<SnapshotService>(SNAPSHOT_SERVICE);
    await snapshots.snapshot({ sessionId: 's1', turnId: 't1', memo: 'agent auto snapshot' });
    // While the turn runs, a person removes a hidden document and renames both notebooks.
    await act('document_remove', { id: hiddenDocs[1] });
    await act('notebook_rename', { id: hidden, name: 'Hidden renamed' });
    await act('notebook_rename', { id: open, name: 'Open renamed' });
    const end = await snapshots.snapshot({ sessionId: 's1', turnId: 't1', memo: 'agent turn end' });
    const got = await seenByAgent<{ files: Record<string, unknown>; removedByOthers?: string[]; settingsByOthers?: Record<string, string[]> }>('snapshot_get', { id: end.id });
    expect(JSON.stringify(got)).not.toContain(hidden);
    expect(JSON.stringify(got)).not.toContain(hiddenDocs[1]);
    expect(got.settingsByOthers).toEqual({ [`${open}/.notebook.json`]: ['name'] });
    expect(got.removedByOthers).toEqual([]);
    // Its settings file and one document: the hidden notebook's files are not counted.
    const made = await seenByAgent<{ files: number | null }>('snapshot_create', { memo: 'by the agent' });
    expect(made.files).toBe(2);
    const listed = await seenByAgent<{ snapshots: { files: number | null }[] }>('snapshot_list', {});
    expect(listed.snapshots.map((snapshot) => snapshot.files)).toEqual(listed.snapshots.map(() => null));
    // The person, who sees everything, is told the whole count.
    const byPerson = await act<{ snapshots: { files: number | null }[] }>('snapshot_list', {});
    expect(byPerson.snapshots[0]!.files).toBeGreaterThan(2);
  });
});
