import { existsSync } from 'node:fs';
import fsp, { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { NOT_EXECUTED, RESULT_UNKNOWN, type ActiveTurn } from '../../../core/session/session-types.js';
import { caught, useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();

async function store() {
  const kernel = await boot();
  return { sessions: kernel.sessions, folder: join(kernel.workspace.agentDir, 'sessions') };
}

const userEntry = (id = 'u1', content = 'hello') => ({ id, type: 'user', content });

describe('the session store: saves', () => {
  it('creates a session at revision 1, keeps unknown fields and never writes transient ones', async () => {
    const { sessions, folder } = await store();
    const id = newId();
    const saved = await sessions.save({ id, title: 'First', entries: [userEntry()], custom: { keep: true }, expectedRevision: 0, agentRunning: true, recoveryState: 'x', messages: ['legacy'] });
    expect(saved.revision).toBe(1);
    const file = JSON.parse(await readFile(join(folder, id, 'session.json'), 'utf8'));
    expect(file).toMatchObject({ id, title: 'First', custom: { keep: true }, revision: 1 });
    for (const key of ['expectedRevision', 'agentRunning', 'recoveryState', 'messages']) expect([key, key in file]).toEqual([key, false]);
    const second = await sessions.save({ id, entries: [userEntry(), userEntry('u2', 'again')], expectedRevision: 1 });
    expect(second.session).toMatchObject({ title: 'First', custom: { keep: true }, revision: 2 });
    expect((await sessions.list()).sessions).toEqual([expect.objectContaining({ id, title: 'First' })]);
  });

  it('answers a save that landed as saved when the index cannot follow it, and lists from the folders then', async () => {
    const { sessions, folder } = await store();
    const id = newId();
    await sessions.save({ id, title: 'Kept', entries: [] });
    // index.json cannot be replaced (a full disk would do the same): a folder in its place.
    const older = await readFile(join(folder, 'index.json'));
    await rm(join(folder, 'index.json'), { force: true });
    await mkdir(join(folder, 'index.json'));
    const second = await sessions.save({ id, title: 'Renamed', entries: [userEntry()], expectedRevision: 1 });
    expect(second.revision).toBe(2);
    expect((await sessions.readStored(id)).title).toBe('Renamed');
    // The older index is what an atomic write that failed leaves behind: read after read, it is not trusted.
    await rm(join(folder, 'index.json'), { recursive: true });
    await writeFile(join(folder, 'index.json'), older);
    for (let i = 0; i < 2; i++) expect((await sessions.list()).sessions).toEqual([expect.objectContaining({ id, title: 'Renamed' })]);
  });

  it('answers a stale expected revision with a conflict carrying the current revision', async () => {
    const { sessions } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    await sessions.save({ id, entries: [], expectedRevision: 1 });
    const error = await caught(sessions.save({ id, entries: [], expectedRevision: 1 }));
    expect([error.code, error.details?.revision]).toEqual(['CONFLICT', 2]);
  });

  it('lets exactly one of several concurrent saves on one revision win', async () => {
    const { sessions } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => sessions.save({ id, entries: [userEntry(`u${i}`)], expectedRevision: 1 })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => ((outcome as PromiseRejectedResult).reason as { code: string }).code)).toEqual(Array(7).fill('CONFLICT'));
  });

  it('creates nothing for a new session saved with a non-zero expected revision', async () => {
    const { sessions, folder } = await store();
    const id = newId();
    expect((await caught(sessions.save({ id, entries: [], expectedRevision: 3 }))).code).toBe('CONFLICT');
    expect(existsSync(join(folder, id))).toBe(false);
  });

  it('fails a save over a corrupt session.json and leaves it byte-identical', async () => {
    const { sessions, folder } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    const file = join(folder, id, 'session.json');
    await writeFile(file, '{ "id": "broken');
    const error = await caught(sessions.save({ id, entries: [] }));
    expect(error.code).toBe('WORKSPACE_INVALID');
    expect(await readFile(file, 'utf8')).toBe('{ "id": "broken');
  });

  it('rebuilds a corrupt index from the session folders instead of losing sessions from the list', async () => {
    const { sessions, folder } = await store();
    const [a, b] = [newId(), newId()];
    await sessions.save({ id: a, title: 'A', entries: [] });
    await sessions.save({ id: b, title: 'B', entries: [] });
    await writeFile(join(folder, 'index.json'), '{ broken');
    await sessions.save({ id: a, entries: [], expectedRevision: 1 });
    expect((await sessions.list()).sessions.map((entry) => entry.title).sort()).toEqual(['A', 'B']);
  });

  it('lists every session folder after a restart, whatever index.json says: missing, short of a session, or naming one that is gone', async () => {
    const first = await boot();
    const folder = join(first.workspace.agentDir, 'sessions');
    const [a, b, c] = [newId(), newId(), newId()];
    for (const [id, title] of [[a, 'A'], [b, 'B'], [c, 'C']] as const) await first.sessions.save({ id, title, entries: [] });
    await first.close();
    // As a full disk leaves it: b's save landed, its index write did not; c's folder went, its index write did not.
    const index = JSON.parse(await readFile(join(folder, 'index.json'), 'utf8')) as Record<string, unknown>;
    delete index[b];
    await writeFile(join(folder, 'index.json'), JSON.stringify(index));
    await rm(join(folder, c), { recursive: true });
    const second = await boot({ workspace: first.workspace.root });
    expect((await second.sessions.list()).sessions.map((entry) => entry.title).sort()).toEqual(['A', 'B']);
    // A new session's index write keeps them (it rewrote the index without b).
    await second.sessions.save({ id: newId(), title: 'D', entries: [] });
    await second.close();
    await rm(join(folder, 'index.json'));
    const third = await boot({ workspace: first.workspace.root });
    expect((await third.sessions.list()).sessions.map((entry) => entry.title).sort()).toEqual(['A', 'B', 'D']);
  });

  it('keeps every session listed when the index and the folder cannot be read for a moment (too many open files)', async () => {
    const { sessions } = await store();
    for (let i = 0; i < 3; i++) await sessions.save({ id: newId(), title: `s${i}`, entries: [] });
    expect((await sessions.list()).total).toBe(3);
    const [readdir, readFile] = [fsp.readdir, fsp.readFile];
    const emfile = () => Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    fsp.readdir = (async (path: string, ...rest: unknown[]) => (String(path).includes('sessions') ? Promise.reject(emfile()) : (readdir as (...args: unknown[]) => Promise<unknown>)(path, ...rest))) as typeof fsp.readdir;
    fsp.readFile = (async (path: string, ...rest: unknown[]) => (String(path).endsWith(join('sessions', 'index.json')) ? Promise.reject(emfile()) : (readFile as (...args: unknown[]) => Promise<unknown>)(path, ...rest))) as typeof fsp.readFile;
    syncBuiltinESMExports();
    try {
      // The save lands; its index write cannot follow (it was rebuilt from a folder it could not list: one entry).
      expect((await sessions.save({ id: newId(), title: 'saved meanwhile', entries: [] })).revision).toBe(1);
    } finally {
      Object.assign(fsp, { readdir, readFile });
      syncBuiltinESMExports();
    }
    expect((await sessions.list()).sessions.map((entry) => entry.title).sort()).toEqual(['s0', 's1', 's2', 'saved meanwhile']);
  });

  it('refuses ids that are not session ids before they reach a path', async () => {
    const { sessions } = await store();
    for (const id of ['../../etc', '20260101000000-ABCDEFG', 'x']) expect((await caught(sessions.save({ id, entries: [] }))).code).toBe('INVALID_INPUT');
    expect((await caught(sessions.read('../x'))).code).toBe('INVALID_INPUT');
  });
});

describe('the session store: runtime turns', () => {
  async function sessionWithTurn(streaming = true) {
    const { sessions, folder } = await store();
    const id = newId();
    await sessions.save({ id, entries: [userEntry('u1', 'question')] });
    if (streaming) sessions.setStreaming(id, true);
    const turn = await sessions.beginTurn(id, { turnID: 't1', userEntryID: 'u1', baseRevision: 1 });
    return { sessions, folder, id, turn };
  }

  it('refuses a second turn while one is uncommitted, and a turn from a stale revision', async () => {
    const { sessions, id } = await sessionWithTurn();
    expect((await caught(sessions.beginTurn(id, { turnID: 't2', baseRevision: 1 }))).details).toMatchObject({ reason: 'uncommitted_turn' });
    const fresh = await store();
    const other = newId();
    await fresh.sessions.save({ id: other, entries: [userEntry()] });
    await fresh.sessions.save({ id: other, entries: [userEntry()], expectedRevision: 1 });
    expect((await caught(fresh.sessions.beginTurn(other, { turnID: 't1', baseRevision: 1 }))).details).toMatchObject({ reason: 'stale_revision', revision: 2 });
    expect(existsSync(join(fresh.folder, other, 'runtime.json'))).toBe(false);
  });

  it('refuses to commit a turn that is still running, and commits it once finished', async () => {
    const { sessions, id, turn } = await sessionWithTurn();
    await sessions.saveTurn(id, { ...turn, delta: [{ id: 'x', type: 'assistant', content: 'answer' }] });
    expect((await caught(sessions.save({ id, entries: [userEntry('u1', 'question')], commitTurnID: 't1' }))).details).toMatchObject({ reason: 'runtime_not_finalized' });
    expect((await caught(sessions.save({ id, entries: [userEntry('u1', 'question')] }))).details).toMatchObject({ reason: 'uncommitted_turn' });
    await sessions.finalizeTurn(id, 't1', 'finished');
    sessions.setStreaming(id, false);
    const committed = await sessions.save({ id, entries: [userEntry('u1', 'question')], commitTurnID: 't1', expectedRevision: 1 });
    expect(committed.revision).toBe(2);
    expect(committed.session.entries.map((entry) => [entry.type, entry.content])).toEqual([['user', 'question'], ['assistant', 'answer']]);
    expect(committed.session.lastCommittedTurnID).toBe('t1');
  });

  it('adds each committed turn\'s tokens to the session\'s totals', async () => {
    const { sessions, id, turn } = await sessionWithTurn();
    await sessions.saveTurn(id, { ...turn, promptTokens: 10, completionTokens: 5, delta: [{ id: 'x', type: 'assistant', content: 'a' }] });
    await sessions.finalizeTurn(id, 't1', 'finished');
    const first = await sessions.save({ id, entries: [userEntry('u1', 'question')], commitTurnID: 't1' });
    const second = await sessions.beginTurn(id, { turnID: 't2', userEntryID: 'u1', baseRevision: first.revision });
    await sessions.saveTurn(id, { ...second, promptTokens: 7, completionTokens: 3 });
    await sessions.finalizeTurn(id, 't2', 'finished');
    const committed = await sessions.save({ id, entries: first.session.entries, commitTurnID: 't2' });
    expect([committed.session.promptTokens, committed.session.completionTokens]).toEqual([17, 8]);
  });

  it('answers a retried commit with what the first one stored, ahead of the revision check', async () => {
    const { sessions, id, turn } = await sessionWithTurn();
    await sessions.saveTurn(id, { ...turn, delta: [{ id: 'x', type: 'assistant', content: 'answer' }] });
    await sessions.finalizeTurn(id, 't1', 'finished');
    const first = await sessions.save({ id, entries: [userEntry('u1', 'question')], commitTurnID: 't1', expectedRevision: 1 });
    const retry = await sessions.save({ id, entries: [userEntry('u1', 'something else entirely')], commitTurnID: 't1', expectedRevision: 1 });
    expect(retry).toEqual(first);
    // A checkpoint that arrives after the commit changes nothing.
    await sessions.saveTurn(id, { ...turn, delta: [] });
    expect((await sessions.read(id)).entries).toHaveLength(2);
  });

  it('finalises a running turn with no stream as interrupted when read, and marks its unfinished calls', async () => {
    const { sessions, folder, id, turn } = await sessionWithTurn();
    const partial: ActiveTurn = {
      ...turn,
      draftContent: 'half an answer',
      draftNotebooks: ['nb-private'],
      delta: [{ id: 'a', type: 'assistant', content: '', toolCalls: [
        { id: 'c1', name: 'block_get', state: 'finished', result: 'ok' },
        { id: 'c2', name: 'block_update', state: 'executing' },
        { id: 'c3', name: 'block_delete', state: 'pending' },
      ] }],
    };
    await sessions.saveTurn(id, partial);
    sessions.setStreaming(id, false);
    const view = await sessions.read(id);
    expect([view.recoveryTurnID, view.recoveryState]).toEqual(['t1', 'interrupted']);
    const calls = view.entries.flatMap((entry) => entry.toolCalls ?? []);
    expect(calls.map((call) => [call.id, call.state, call.result])).toEqual([['c1', 'finished', 'ok'], ['c2', 'unknown', RESULT_UNKNOWN], ['c3', 'skipped', NOT_EXECUTED]]);
    // The draft keeps whose notes its model had been shown, like any answer (egress-filter.ts).
    expect(view.entries.at(-1)).toMatchObject({ type: 'assistant', content: 'half an answer', notebooks: ['nb-private'] });
    // Written, not only shown: runtime.json holds it once its journal is folded (as the kernel does when it closes).
    await sessions.close();
    const runtime = JSON.parse(await readFile(join(folder, id, 'runtime.json'), 'utf8'));
    expect(runtime.activeTurn.state).toBe('interrupted');
    const stored = JSON.parse(await readFile(join(folder, id, 'session.json'), 'utf8'));
    expect(stored.entries).toEqual([userEntry('u1', 'question')]);
  });

  it('refuses runtime writes for a session that was deleted', async () => {
    const { sessions, id, turn } = await sessionWithTurn(false);
    await sessions.delete(id);
    expect((await caught(sessions.saveTurn(id, turn))).code).toBe('NOT_FOUND');
    expect((await caught(sessions.read(id))).code).toBe('NOT_FOUND');
  });
});
