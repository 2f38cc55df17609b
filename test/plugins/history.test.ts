import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../core/http/app.js';
import { caught } from '../helpers/harness.js';
import { agent, reader, useBlocks, type Act } from './blocks/blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Versions { versions: { version: string; op: string; by: string; title: string }[] }

async function notes(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const other = await act<Created>('notebook_create', { name: 'Other' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Plan', markdown: 'first version' });
  return { notebook: notebook.id, other: other.id, doc: doc.id };
}

describe('document history', () => {
  it('keeps one version for a burst of edits (the state before it), and one before every move and removal', async () => {
    const { act } = await boot();
    const { other, doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'second line' });
    await act('document_rename', { id: doc, title: 'Plan B' });
    await act('block_append', { parentId: doc, markdown: 'third line' });
    await act('document_move', { id: doc, notebook: other });
    await act('document_remove', { id: doc });
    const { versions } = await act<Versions>('history_list', { id: doc });
    expect(versions.map((version) => [version.op, version.title, version.by])).toEqual([
      ['remove', 'Plan B', 'person:alice'], ['move', 'Plan B', 'person:alice'], ['update', 'Plan', 'person:alice'],
    ]);
    const oldest = await act<{ text: string }>('history_get', { id: doc, version: versions.at(-1)!.version });
    expect(oldest.text).toContain('first version');
    expect(oldest.text).not.toContain('second line');
  });

  it('has the version that starts a burst on disk before the edit is answered, and writes none for the rest of the burst', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notes(act);
    const folder = join(kernel.workspace.root, 'history', doc);
    // Read from the disk, not through history_list (which waits for versions still being written).
    await act('block_append', { parentId: doc, markdown: 'second line' });
    // Each version has its description beside it (…meta.json), read by listings.
    const versions = async () => (await readdir(folder)).filter((name) => !name.endsWith('.meta.json'));
    const after = await versions();
    expect(after).toHaveLength(1);
    expect(await readFile(join(folder, after[0]!), 'utf8')).toContain('first version');
    for (let i = 0; i < 5; i++) await act('block_append', { parentId: doc, markdown: `line ${i}` });
    await kernel.close();
    expect(await versions()).toEqual(after);
  });

  it('keeps the previous version before every change, move and removal when coalescing is off', async () => {
    const { act } = await boot({ config: { plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const { other, doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'second line' });
    await act('document_rename', { id: doc, title: 'Plan B' });
    await act('document_move', { id: doc, notebook: other });
    await act('document_remove', { id: doc });
    const { versions } = await act<Versions>('history_list', { id: doc });
    expect(versions.map((version) => [version.op, version.title, version.by])).toEqual([
      ['remove', 'Plan B', 'person:alice'], ['move', 'Plan B', 'person:alice'], ['update', 'Plan', 'person:alice'], ['update', 'Plan', 'person:alice'],
    ]);
    const oldest = await act<{ text: string }>('history_get', { id: doc, version: versions.at(-1)!.version });
    expect(oldest.text).toContain('first version');
    expect(oldest.text).not.toContain('second line');
  });

  it('brings back a removed document, and restores an earlier version keeping the current one', async () => {
    const { act } = await boot();
    const { doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'added later' });
    await act('document_remove', { id: doc });
    expect((await caught(act('document_get', { id: doc }))).code).toBe('NOT_FOUND');
    const removed = (await act<Versions>('history_list', { id: doc })).versions[0]!;
    await act('history_rollback', { id: doc, version: removed.version });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('added later');
    const first = (await act<Versions>('history_list', { id: doc })).versions.at(-1)!;
    await act('history_rollback', { id: doc, version: first.version });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).not.toContain('added later');
    expect((await act<Versions>('history_list', { id: doc })).versions[0]!.op).toBe('rollback');
  });

  it("keeps each document's last text when its notebook is removed, shown to an administrator, not to the agent", async () => {
    const { act } = await boot();
    const { notebook, doc } = await notes(act);
    const before = await act<Created>('snapshot_create', {});
    await act('notebook_remove', { id: notebook });
    // The snapshots show what went with it too (they dropped the files of a notebook that no longer exists).
    expect((await act<{ removed: string[] }>('snapshot_diff', { from: before.id })).removed).toContain(`${notebook}/${doc}.json`);
    const { versions } = await act<Versions>('history_list', { id: doc });
    expect(versions.map((version) => version.op)).toEqual(['remove']);
    expect((await act<{ text: string }>('history_get', { id: doc, version: versions[0]!.version })).text).toContain('first version');
    // Its notebook's privacy went with it: the agent is not assumed to have been allowed.
    expect((await act<Versions>('history_list', { id: doc }, agent())).versions).toEqual([]);
  });

  it('removes a notebook of many documents whatever the time limit of a short action, each document kept as a version', async () => {
    const first = await boot();
    const { id: notebook } = await first.act<Created>('notebook_create', { name: 'Large' });
    const docs = 48;
    for (let i = 0; i < docs; i++) await first.act('document_create', { notebook, title: `Doc ${i}`, markdown: `text ${i}` });
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    // A time limit every removal of many documents passes: keeping their versions is work of a job's length.
    const second = await boot({ workspace: root, config: { actions: { timeoutMs: 1 } } });
    expect(await second.act('notebook_remove', { id: notebook })).toEqual({ removed: notebook, documents: docs });
    await second.kernel.close();
    const { act } = await boot({ workspace: root });
    const found = await act<{ results: { documentId: string; op: string }[] }>('history_search', { query: 'text', limit: 100 });
    expect(found.results.filter((version) => version.op === 'remove')).toHaveLength(docs);
  });

  it('keeps no versions while history is disabled, and one per change once enabled again', async () => {
    const { kernel, act } = await boot({ config: { plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const { doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'second' });
    const count = async () => (await act<Versions>('history_list', { id: doc })).versions.length;
    const before = await count();
    expect(before).toBeGreaterThan(0);
    await kernel.plugins.setEnabled('history', false);
    await act('block_append', { parentId: doc, markdown: 'while history is off' });
    await kernel.plugins.setEnabled('history', true);
    expect(await count()).toBe(before);
    await act('block_append', { parentId: doc, markdown: 'once on again' });
    expect(await count()).toBe(before + 1);
  });

  it('puts a version kept before a move back where the document is now, keeping what it replaces', async () => {
    const { kernel, act } = await boot();
    const { other, doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'second line' });
    await act('document_move', { id: doc, notebook: other });
    const oldest = (await act<Versions>('history_list', { id: doc })).versions.at(-1)!;
    const restored = await act<{ restored: string }>('history_rollback', { id: doc, version: oldest.version });
    expect(restored.restored).toBe(`${other}/${doc}.json`);
    // One file with the document's id, in the notebook it was moved to.
    const files = (await readdir(kernel.workspace.dataDir, { recursive: true })).filter((path) => path.endsWith(`${doc}.json`));
    expect(files).toEqual([join(other, `${doc}.json`)]);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).not.toContain('second line');
    expect((await act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    const kept = (await act<Versions>('history_list', { id: doc })).versions[0]!;
    expect(kept.op).toBe('rollback');
    expect((await act<{ text: string }>('history_get', { id: doc, version: kept.version })).text).toContain('second line');
  });

  it("keeps the state between two authors' edits of one burst, and searches by instants", async () => {
    const { act } = await boot();
    const { doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'the person wrote this' });
    // Within the coalescing window, but the agent's: the person's edit is kept before it.
    await act('block_append', { parentId: doc, markdown: 'the agent wrote this' }, agent());
    // Another call of the same turn is the same author: no version of its own.
    await act('block_append', { parentId: doc, markdown: 'and this, in another call' }, agent('s1', 't1', 'c2'));
    const { versions } = await act<Versions>('history_list', { id: doc });
    expect(versions.map((version) => version.by)).toEqual([agent().name, 'person:alice']);
    expect((await act<{ text: string }>('history_get', { id: doc, version: versions[0]!.version })).text).toContain('the person wrote this');
    // An offset is an instant, not a string to compare: half an hour ago written in +02:00 reads later than now in UTC.
    const halfAnHourAgo = `${new Date(Date.now() - 1_800_000 + 7_200_000).toISOString().slice(0, 19)}+02:00`;
    expect((await act<{ results: unknown[] }>('history_search', { to: halfAnHourAgo })).results).toHaveLength(0);
    expect((await act<{ results: unknown[] }>('history_search', { from: halfAnHourAgo })).results).toHaveLength(2);
  });

  it('keeps at most the configured number of versions, and searches and clears them', async () => {
    const { act } = await boot({ config: { plugins: { history: { config: { maxVersions: 3, coalesceSeconds: 0 } } } } });
    const { doc } = await notes(act);
    for (let i = 0; i < 5; i++) await act('block_append', { parentId: doc, markdown: `line ${i} kiwi` });
    expect((await act<Versions>('history_list', { id: doc })).versions).toHaveLength(3);
    expect((await act<{ results: unknown[] }>('history_search', { query: 'line 3 kiwi' })).results).toHaveLength(1);
    expect((await act<{ results: unknown[] }>('history_search', { op: 'remove' })).results).toHaveLength(0);
    await act('history_clear', { id: doc });
    expect((await act<Versions>('history_list', { id: doc })).versions).toEqual([]);
    expect((await caught(act('history_get', { id: doc, version: '20260101T000000000Z-update' }))).code).toBe('NOT_FOUND');
  });
});

describe('listing versions reads their descriptions, not their texts', () => {
  it('lists from each version\'s description, makes a missing or damaged one again from the version, and prunes both', async () => {
    const { kernel, act } = await boot({ config: { plugins: { history: { config: { maxVersions: 3, coalesceSeconds: 0 } } } } });
    const { doc } = await notes(act);
    for (let i = 0; i < 4; i++) await act('block_append', { parentId: doc, markdown: `line ${i} plum` });
    const folder = join(kernel.workspace.root, 'history', doc);
    const files = (await readdir(folder)).sort();
    // Three versions kept (the fourth pruned with its description), each with its description beside it.
    expect(files.filter((name) => name.endsWith('.meta.json'))).toHaveLength(3);
    expect(files).toHaveLength(6);
    const listed = (await act<Versions>('history_list', { id: doc })).versions;
    expect(listed).toHaveLength(3);
    // A listing reads the descriptions: a version's text changed under it does not change what is listed.
    const [newest, second] = listed as unknown as { version: string; title: string; op: string; by: string }[];
    const versionFile = join(folder, `${newest!.version}.json`);
    const stored = JSON.parse(await readFile(versionFile, 'utf8')) as { text: string };
    await writeFile(versionFile, JSON.stringify({ ...stored, text: JSON.stringify({ id: doc, type: 'NodeDocument', content: 'Not read by a listing', children: [] }) }));
    expect((await act<Versions>('history_list', { id: doc })).versions).toEqual(listed);
    // Without its description (written before they were kept, or lost in a crash), or with a damaged one, a
    // version is read whole once, listed the same, and gets it again.
    await rm(join(folder, `${second!.version}.meta.json`));
    await writeFile(join(folder, `${newest!.version}.meta.json`), '{"version":');
    const again = (await act<Versions>('history_list', { id: doc })).versions as unknown as { version: string; title: string }[];
    expect(again.map((version) => version.version)).toEqual(listed.map((version) => (version as unknown as { version: string }).version));
    expect(again[0]!.title).toBe('Not read by a listing');
    expect(again[1]).toEqual(second);
    expect((await readdir(folder)).filter((name) => name.endsWith('.meta.json'))).toHaveLength(3);
    // A description whose version is gone (a crash between the two removals) goes at the next write.
    await writeFile(join(folder, '20200101T000000000Z-update.meta.json'), '{}');
    await act('block_append', { parentId: doc, markdown: 'one more' });
    expect((await readdir(folder)).filter((name) => name.endsWith('.meta.json'))).toHaveLength(3);
  });
});

describe('who may see kept versions and snapshots', () => {
  it('shows a reader the history of published notebooks only, refuses it the snapshots, and keeps what a deny rule hides from the agent', async () => {
    const first = await boot();
    const open = await first.act<Created>('notebook_create', { name: 'Open', access: 'published' });
    const closed = await first.act<Created>('notebook_create', { name: 'Closed' });
    const pub = await first.act<Created>('document_create', { notebook: open.id, title: 'Public', markdown: 'shared words' });
    const priv = await first.act<Created>('document_create', { notebook: closed.id, title: 'Private', markdown: 'secret words' });
    const snap = await first.act<Created>('snapshot_create', {});
    await first.act('block_append', { parentId: pub.id, markdown: 'more shared' });
    await first.act('block_append', { parentId: priv.id, markdown: 'more secret' });
    const hidden = (await first.act<Versions>('history_list', { id: priv.id })).versions[0]!;

    expect((await first.act<Versions>('history_list', { id: priv.id }, reader)).versions).toEqual([]);
    const plain = await caught(first.act('history_get', { id: priv.id, version: hidden.version }, reader));
    expect(plain.code).toBe('NOT_FOUND');
    // Its version file damaged: the same answer as for a version that never was (it said the file did not
    // parse, and where it lies); the administrator is told.
    const versionFile = join(first.kernel.workspace.root, 'history', priv.id, `${hidden.version}.json`);
    const intact = await readFile(versionFile, 'utf8');
    await writeFile(versionFile, '{"cut short');
    const damaged = await caught(first.act('history_get', { id: priv.id, version: hidden.version }, reader));
    expect({ code: damaged.code, message: damaged.message }).toEqual({ code: plain.code, message: plain.message });
    expect((await caught(first.act('history_get', { id: priv.id, version: hidden.version }))).code).toBe('WORKSPACE_INVALID');
    // A search passes over it (it failed whole, for everyone who may see that version).
    const passedOver = await first.act<{ results: { documentId: string }[]; unreadable?: number }>('history_search', { query: 'words' });
    expect([passedOver.results.map((version) => version.documentId), passedOver.unreadable]).toEqual([expect.arrayContaining([pub.id]), 1]);
    await writeFile(versionFile, intact);
    const found = await first.act<{ results: { documentId: string }[] }>('history_search', { query: 'words' }, reader);
    expect(found.results.map((version) => version.documentId)).toEqual([pub.id]);
    for (const action of ['snapshot_list', 'snapshot_verify']) expect((await caught(first.act(action, {}, reader))).code).toBe('FORBIDDEN');

    const root = first.kernel.workspace.root;
    await first.kernel.close();
    const { act } = await boot({ workspace: root, config: { gate: { deny: [{ tool: '*', notebook: closed.id }] } } });
    const seenByAgent = await act<{ results: { documentId: string }[] }>('history_search', { query: 'secret' }, agent());
    expect(seenByAgent.results).toEqual([]);
    // A version in a hidden notebook is not found, as one that never was (not refused: that would tell it exists).
    expect((await caught(act('history_get', { id: priv.id, version: hidden.version }, agent()))).code).toBe('NOT_FOUND');
    await act('document_remove', { id: priv.id });
    expect((await caught(act('history_get', { id: priv.id, version: hidden.version }, agent()))).code).toBe('NOT_FOUND');
    const diff = await act<{ changed: string[] }>('snapshot_diff', { from: snap.id }, agent());
    expect(diff.changed).toEqual([`${open.id}/${pub.id}.json`]);
    expect((await caught(act('history_clear', {}, agent()))).code).toBe('FORBIDDEN');
  });

  it('keeps what was written while a notebook was private from readers after it is published, and the agent from putting it back there', async () => {
    const { act, kernel } = await boot({ config: { plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const root = kernel.workspace.root;
    const notebook = await act<Created>('notebook_create', { name: 'Diary' });
    await act('notebook_set_privacy', { id: notebook.id, egress: 'local-only' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Diary', markdown: 'harmless' });
    await act('block_append', { parentId: doc.id, markdown: 'SECRET written while private' });
    await act('block_append', { parentId: doc.id, markdown: 'more' });
    const withSecret = (await act<Versions>('history_list', { id: doc.id })).versions[0]!;
    // The person opens the notebook up, and writes on.
    await act('notebook_set_access', { id: notebook.id, access: 'published' });
    await act('notebook_set_privacy', { id: notebook.id, egress: 'allowed' });
    await act('block_append', { parentId: doc.id, markdown: 'public line' });
    const afterwards = (await act<Versions>('history_list', { id: doc.id })).versions[0]!;
    // Readers: the version kept while it was published, none of those kept while it was private (the secret was readable).
    expect((await act<Versions>('history_list', { id: doc.id }, reader)).versions.map((version) => version.version)).toEqual([afterwards.version]);
    expect((await caught(act('history_get', { id: doc.id, version: withSecret.version }, reader))).code).toBe('NOT_FOUND');
    // The agent: written while local-only, not for a model off this machine now that it is not; and never put back.
    expect((await caught(act('history_get', { id: doc.id, version: withSecret.version }, agent()))).code).toBe('NOT_FOUND');
    expect((await caught(act('history_rollback', { id: doc.id, version: withSecret.version }, agent()))).code).toBe('NOT_FOUND');
    // The person may.
    expect((await act<{ text: string }>('history_get', { id: doc.id, version: withSecret.version })).text).toContain('SECRET');
    // Private only (its text may leave): the agent reads the version, but does not put it back into the notebook published since.
    const plans = await act<Created>('notebook_create', { name: 'Plans' });
    const plan = await act<Created>('document_create', { notebook: plans.id, title: 'Plan', markdown: 'draft' });
    await act('block_append', { parentId: plan.id, markdown: 'unannounced' });
    await act('block_append', { parentId: plan.id, markdown: 'more' });
    const draft = (await act<Versions>('history_list', { id: plan.id })).versions[0]!;
    await act('notebook_set_access', { id: plans.id, access: 'published' });
    expect((await act<{ text: string }>('history_get', { id: plan.id, version: draft.version }, agent())).text).toContain('unannounced');
    expect(await caught(act('history_rollback', { id: plan.id, version: draft.version }, agent()))).toMatchObject({ code: 'ACTION_DENIED', details: { reason: 'private_version' } });
    // The version a person's own restore keeps carries its privacy too (it had none, and passed every check).
    await act('notebook_set_access', { id: plans.id, access: 'private' });
    await act('history_rollback', { id: plan.id, version: draft.version });
    const kept = (await act<Versions>('history_list', { id: plan.id })).versions.find((version) => version.op === 'rollback')!;
    await act('notebook_set_access', { id: plans.id, access: 'published' });
    expect(await caught(act('history_rollback', { id: plan.id, version: kept.version }, agent()))).toMatchObject({ code: 'ACTION_DENIED', details: { reason: 'private_version' } });
    // A version kept before privacy was recorded counts as private for such a restore.
    const old = join(root, 'history', plan.id, '20200101T000000000Z-update.json');
    const { access: _access, egress: _egress, ...unrecorded } = JSON.parse(await readFile(join(root, 'history', plan.id, `${kept.version}.json`), 'utf8')) as Record<string, unknown>;
    await writeFile(old, JSON.stringify({ ...unrecorded, version: '20200101T000000000Z-update', op: 'update', time: '2020-01-01T00:00:00.000Z' }));
    expect(await caught(act('history_rollback', { id: plan.id, version: '20200101T000000000Z-update' }, agent()))).toMatchObject({ code: 'ACTION_DENIED', details: { reason: 'private_version' } });
  });
});

describe('history and snapshots over HTTP', () => {
  it('answers with statuses that fit: 200, 403 for a reader, 404 for unknown ids, 400 for malformed ones', async () => {
    const token = (name: string) => createHash('sha256').update(name).digest('hex');
    const { kernel, act } = await boot({ config: { auth: { tokens: [{ name: 'alice', role: 'admin', sha256: token('qk_admin') }, { name: 'rita', role: 'reader', sha256: token('qk_reader') }] } } });
    const { doc } = await notes(act);
    await act('block_append', { parentId: doc, markdown: 'second line' });
    const app = createHttpApp(kernel);
    // Snapshot create and rollback are long actions (jobs): asked to wait, they answer like any call.
    const call = async (action: string, body: unknown, secret = 'qk_admin') => {
      const response = await app.request(`/api/actions/${action}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', prefer: 'wait=30' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as { result?: Record<string, unknown[]>; error?: { code: string } } };
    };
    const listed = await call('history/history/list', { id: doc });
    expect(listed.status).toBe(200);
    expect(listed.body.result!.versions).toHaveLength(1);
    expect((await call('snapshots/snapshot/create', { memo: 'by hand' })).status).toBe(200);
    expect((await call('snapshots/snapshot/list', {}, 'qk_reader')).status).toBe(403);
    const unknown = await call('snapshots/snapshot/rollback', { id: '20200101000000-aaaaaaa' });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect((await call('history/history/get', { id: doc, version: '../../etc' })).status).toBe(400);
    expect((await call('snapshots/snapshot/get', { id: 'not an id' })).status).toBe(400);
  });
});
