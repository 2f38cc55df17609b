import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { turnDependencies } from '../../core/turn/kernel-turns.js';
import { runTurn } from '../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../fakes/scripted-provider.js';
import { runCli } from '../../core/cli/run-cli.js';
import { bufferIO } from '../helpers/buffer-io.js';
import { caught } from '../helpers/harness.js';
import { agent, useBlocks, type Act } from './blocks/blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Tree { document: { children: { id: string; content?: string }[] } }

async function notes(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Kept', markdown: 'original text\n\nsecond' });
  return { notebook: notebook.id, doc: doc.id };
}

describe('snapshots', () => {
  it('shows what changed since a snapshot, down to the blocks of a document', async () => {
    const { act } = await boot();
    const { notebook, doc } = await notes(act);
    const snap = await act<Created & { files: number }>('snapshot_create', { memo: 'before' });
    expect(snap.files).toBe(2);
    const [first] = (await act<Tree>('document_get', { id: doc })).document.children;
    await act('block_update', { id: first!.id, markdown: 'changed text' });
    const added = await act<Created>('document_create', { notebook, title: 'New' });
    const diff = await act<{ added: string[]; changed: string[]; documents: { path: string; blocks: { changed: string[] } }[] }>('snapshot_diff', { from: snap.id });
    expect(diff.added).toEqual([`${notebook}/${added.id}.json`]);
    expect(diff.changed).toEqual([`${notebook}/${doc}.json`]);
    expect(diff.documents[0]!.blocks.changed).toEqual(expect.arrayContaining([first!.id, doc]));
  });

  it('rolls the notes back exactly, and the index follows', async () => {
    const { kernel, act } = await boot();
    const { notebook, doc } = await notes(act);
    const snap = await act<Created>('snapshot_create', { memo: 'before' });
    const [first] = (await act<Tree>('document_get', { id: doc })).document.children;
    await act('block_update', { id: first!.id, markdown: 'ruined #oops#' });
    const extra = await act<Created>('document_create', { notebook, title: 'Extra', markdown: 'to go' });
    const restored = await act<{ removed: string[]; changed: string[] }>('snapshot_rollback', { id: snap.id });
    expect(restored.removed).toEqual([`${notebook}/${extra.id}.json`]);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('original text');
    expect((await caught(act('document_get', { id: extra.id }))).code).toBe('NOT_FOUND');
    expect((await act<{ tags: unknown[] }>('tag_list', {})).tags).toEqual([]);
    expect(await readdir(join(kernel.workspace.dataDir, notebook))).toEqual(['.notebook.json', `${doc}.json`]);
    // What the rollback overwrote or removed is kept in history, so the rollback itself can be undone.
    const kept = await act<{ versions: { op: string; by: string; version: string }[] }>('history_list', { id: doc });
    expect(kept.versions[0]).toMatchObject({ op: 'rollback', by: 'person:alice' });
    expect((await act<{ text: string }>('history_get', { id: doc, version: kept.versions[0]!.version })).text).toContain('ruined');
    expect((await act<{ versions: { op: string }[] }>('history_list', { id: extra.id })).versions[0]!.op).toBe('remove');
  });

  it('keeps every notebook\'s privacy when the agent or an MCP client rolls back, and never publishes a notebook it brings back', async () => {
    const { act } = await boot();
    const kept = await act<Created>('notebook_create', { name: 'Diary', access: 'published' });
    const doc = await act<Created>('document_create', { notebook: kept.id, title: 'Diary', markdown: 'public at first' });
    const gone = await act<Created>('notebook_create', { name: 'Gone', access: 'published' });
    const snap = await act<Created>('snapshot_create', { memo: 'before privacy' });
    type Listed = { notebooks: { id: string; name: string; access: string; egress: string }[] };
    const settings = async () => Object.fromEntries((await act<Listed>('notebook_list', {})).notebooks.map((entry) => [entry.id, [entry.access, entry.egress]]));
    for (const principal of [agent(), { kind: 'mcp' as const, name: 'alice', role: 'admin' as const, client: 'test' }]) {
      // The person closes the diary after the snapshot, writes a secret in it, and removes the other.
      await act('notebook_set_access', { id: kept.id, access: 'private' });
      await act('notebook_set_privacy', { id: kept.id, egress: 'local-only' });
      await act('block_append', { parentId: doc.id, markdown: 'a secret written once private' });
      if ((await settings())[gone.id]) await act('notebook_remove', { id: gone.id });
      await act('snapshot_rollback', { id: snap.id }, principal);
      // The notes are rolled back; the diary stays private and local-only (it was published again, egress allowed), the other comes back private.
      expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).not.toContain('secret');
      expect(await settings()).toEqual({ [kept.id]: ['private', 'local-only'], [gone.id]: ['private', 'allowed'] });
    }
    // A person's rollback restores the notebooks as they were, privacy included.
    await act('snapshot_rollback', { id: snap.id });
    expect(await settings()).toEqual({ [kept.id]: ['published', 'allowed'], [gone.id]: ['published', 'allowed'] });
    // The other way: text written while the diary was private and local-only, removed before the person opened it up,
    // comes back with the privacy it was written under (each setting the stricter of the snapshot's and the current).
    await act('notebook_set_access', { id: kept.id, access: 'private' });
    await act('notebook_set_privacy', { id: kept.id, egress: 'local-only' });
    await act('block_append', { parentId: doc.id, markdown: 'a secret written while private' });
    const closed = await act<Created>('snapshot_create', { memo: 'private' });
    const secret = (await act<Tree>('document_get', { id: doc.id })).document.children.find((block) => block.content?.includes('secret'))!;
    await act('block_delete', { id: secret.id });
    await act('notebook_set_access', { id: kept.id, access: 'published' });
    await act('notebook_set_privacy', { id: kept.id, egress: 'allowed' });
    await act('snapshot_rollback', { id: closed.id }, agent());
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).toContain('secret');
    expect((await settings())[kept.id]).toEqual(['private', 'local-only']);
  });

  it('says at start that every agent write will be refused when the snapshots plugin is off and a snapshot is required', async () => {
    const off = await boot({ config: { plugins: { snapshots: { enabled: false } } } });
    expect(off.kernel.configProblems()).toContainEqual(expect.objectContaining({ code: 'CONFIG_SNAPSHOTS_MISSING', pointer: '/agent/requireSnapshot' }));
    const allowed = await boot({ config: { plugins: { snapshots: { enabled: false } }, agent: { requireSnapshot: false } } });
    expect(allowed.kernel.configProblems().map((found) => found.code)).not.toContain('CONFIG_SNAPSHOTS_MISSING');
    expect((await boot()).kernel.configProblems().map((found) => found.code)).not.toContain('CONFIG_SNAPSHOTS_MISSING');
  });

  it('serializes a rollback with writes racing it: the files and the index agree afterwards', async () => {
    const { act } = await boot();
    const { doc } = await notes(act);
    const snap = await act<Created>('snapshot_create', { memo: 'before' });
    const [first] = (await act<Tree>('document_get', { id: doc })).document.children;
    const rows = async () => (await act<{ rows: unknown[][] }>('sql_query', { sql: `SELECT id, content FROM blocks WHERE root_id = '${doc}' ORDER BY id` })).rows;
    const writes = Array.from({ length: 6 }, (_, i) => act('block_update', { id: first!.id, markdown: `racing ${i}` }));
    const rollback = act('snapshot_rollback', { id: snap.id });
    await Promise.all([...writes, rollback]);
    const indexed = await rows();
    await act('index_rebuild', {});
    expect(await rows()).toEqual(indexed);
    const markdown = (await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown;
    expect(JSON.stringify(indexed)).toContain(markdown.includes('racing') ? 'racing' : 'original text');
  });

  it('stores each content once, finds damaged objects, refuses to roll back from them, and purges unreferenced ones', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notes(act);
    const first = await act<Created>('snapshot_create', {});
    await act<Created>('snapshot_create', {});
    const objects = join(kernel.workspace.root, 'repo', 'objects');
    const stored = async () => (await readdir(objects, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    expect(await stored()).toHaveLength(2);
    expect(await act('snapshot_verify', {})).toMatchObject({ snapshots: 2, objects: 2, damaged: [] });
    const originals = new Map<string, Buffer>();
    for (const file of await stored()) {
      originals.set(file, await readFile(file));
      await writeFile(file, gzipSync(Buffer.from('tampered')));
    }
    expect((await act<{ damaged: unknown[] }>('snapshot_verify', {})).damaged).toHaveLength(2);
    const [block] = (await act<Tree>('document_get', { id: doc })).document.children;
    await act('block_update', { id: block!.id, markdown: 'changed after the snapshot' });
    const extra = await act<Created>('notebook_create', { name: 'After' });
    expect((await caught(act('snapshot_rollback', { id: first.id }))).code).toBe('WORKSPACE_INVALID');
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('changed after the snapshot');
    expect((await act<{ notebooks: { id: string }[] }>('notebook_list', {})).notebooks.map((nb) => nb.id)).toContain(extra.id);
    for (const [file, content] of originals) await writeFile(file, content);
    const orphanFolder = join(objects, 'ff');
    await mkdir(orphanFolder, { recursive: true });
    await writeFile(join(orphanFolder, 'f'.repeat(64)), gzipSync(Buffer.from('nobody')));
    expect(await act('snapshot_purge', {})).toMatchObject({ removed: 1 });
    expect((await caught(act('snapshot_get', { id: newId() }))).code).toBe('NOT_FOUND');
  });

  it('gives the agent one snapshot before its first write, with the turn as origin', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notes(act);
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    await kernel.sessions.setPermissionMode(sessionId, 'auto');
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'block_append', args: { parentId: doc, markdown: 'by the agent' } }, { id: 'c2', name: 'block_append', args: { parentId: doc, markdown: 'again' } }), answer('done')]);
    const outcome = await runTurn(turnDependencies(kernel), { sessionId, message: 'add two lines', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
    expect(outcome.state).toBe('finished');
    const { snapshots } = await act<{ snapshots: { origin: string; memo: string }[] }>('snapshot_list', {});
    // One snapshot before the first write; a second at the turn's end is kept for rolling the turn back.
    expect(snapshots.map((snapshot) => [snapshot.memo, snapshot.origin])).toEqual([['agent turn end', `agent:${sessionId}/${outcome.turnID}`], ['agent auto snapshot', `agent:${sessionId}/${outcome.turnID}`]]);
    const session = await kernel.sessions.read(sessionId);
    expect(session.entries.filter((entry) => entry.type === 'snapshot')).toHaveLength(1);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('again');
  });

  it('keeps the agent from writing when the repository cannot take a snapshot', async () => {
    const { kernel, act } = await boot();
    const { doc } = await notes(act);
    await mkdir(join(kernel.workspace.root, 'repo'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'repo', 'objects'), 'a file where the object folder should be');
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    await kernel.sessions.setPermissionMode(sessionId, 'auto');
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'block_append', args: { parentId: doc, markdown: 'must not appear' } })]);
    const events: string[] = [];
    const outcome = await runTurn(turnDependencies(kernel), { sessionId, message: 'write', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => { if (event.type === 'error') events.push(event.code); });
    expect([outcome.state, events]).toEqual(['interrupted', ['SNAPSHOT_FAILED']]);
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).not.toContain('must not appear');
  });

  it('works from the command line: create, list, diff, rollback, verify', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const { doc } = await notes(first.act);
    await first.kernel.close();
    await mkdir(join(workspace, 'skills', 'weekly'), { recursive: true });
    await writeFile(join(workspace, 'skills', 'weekly', 'SKILL.md'), '---\nname: weekly\ndescription: A weekly review.\n---\n\nList open tasks.\n');
    const io = () => bufferIO();
    const created = io();
    expect(await runCli(['snapshot', 'create', '--memo', 'cli', '--workspace', workspace], created)).toBe(0);
    const id = /snapshot (\S+):/.exec(created.outText())![1]!;
    const unchanged = io();
    expect(await runCli(['snapshot', 'diff', id, '--workspace', workspace], unchanged)).toBe(0);
    expect(unchanged.outText().trim()).toBe('no changes');
    // A skill removed since is in the diff and put back by the rollback (both printed nothing of skills).
    await rm(join(workspace, 'skills', 'weekly'), { recursive: true });
    const second = await boot({ workspace });
    const [block] = (await second.act<Tree>('document_get', { id: doc })).document.children;
    await second.act('block_update', { id: block!.id, markdown: 'edited' });
    await second.kernel.close();
    const listed = io();
    expect(await runCli(['snapshot', 'list', '--workspace', workspace], listed)).toBe(0);
    expect(listed.outText()).toContain(`${id}`);
    const diff = io();
    expect(await runCli(['snapshot', 'diff', id, '--workspace', workspace], diff)).toBe(0);
    expect(diff.outText()).toMatch(new RegExp(`^~ .*${doc}\\.json$`, 'm'));
    expect(diff.outText()).toMatch(/^- skills\/weekly\/SKILL\.md$/m);
    const rolled = io();
    expect(await runCli(['snapshot', 'rollback', id, '--workspace', workspace], rolled)).toBe(0);
    expect(rolled.outText()).toContain('restored 2 file(s), removed 0');
    expect(existsSync(join(workspace, 'skills', 'weekly', 'SKILL.md'))).toBe(true);
    expect(await runCli(['snapshot', 'verify', '--workspace', workspace], io())).toBe(0);
    const third = await boot({ workspace });
    expect((await third.act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('original text');
  });
});
