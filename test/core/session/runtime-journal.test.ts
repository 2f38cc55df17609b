import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { FileSessionStore } from '../../../core/session/session-store.js';
import type { ActiveTurn, SessionEntry, ToolCallRecord } from '../../../core/session/session-types.js';
import { useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();

async function store() {
  const kernel = await boot();
  const folder = join(kernel.workspace.agentDir, 'sessions');
  const files = (id: string) => ({ runtime: join(folder, id, 'runtime.json'), journal: join(folder, id, 'runtime.journal.jsonl') });
  // Another store over the same files: what a reader after a restart sees.
  const another = () => new FileSessionStore(kernel.workspace);
  return { sessions: kernel.sessions, files, another };
}

const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
/** A tool result of the size a note read gives (a few kB), different for each call. */
const result = (n: number) => `result ${n} `.repeat(400);

/** A session with a message and a turn begun on it; checkpoints made as a turn makes them: a round's entry, then its calls finishing. */
async function turnWithRounds(sessions: FileSessionStore, rounds: number) {
  const id = newId();
  const base = await sessions.save({ id, entries: [{ id: 'u1', type: 'user', content: 'read them all' }] });
  const turn: ActiveTurn = await sessions.beginTurn(id, { turnID: 't1', userEntryID: 'u1', baseRevision: base.revision });
  sessions.setStreaming(id, true);
  for (let round = 0; round < rounds; round++) {
    const calls = [0, 1].map((call) => ({ id: `c${round}_${call}`, name: 'block_get', arguments: { n: call }, state: 'pending' as const }));
    turn.delta.push({ id: `r${round}`, type: 'assistant', content: '', toolCalls: calls });
    await sessions.saveTurn(id, turn);
    for (const [call, record] of calls.entries()) {
      Object.assign(record, { state: 'finished', result: result(round * 2 + call) });
      await sessions.saveTurn(id, turn);
    }
  }
  return { id, turn };
}

const calls = (entries: readonly SessionEntry[]) => entries.flatMap((entry) => entry.toolCalls ?? []).map((call) => [call.id, call.state, call.result]);

describe('the runtime journal', () => {
  it('appends each checkpoint of a turn as what changed (the round under way), not the whole turn again', async () => {
    const { sessions, files, another } = await store();
    const { id, turn } = await turnWithRounds(sessions, 12);
    // runtime.json is as the turn's start wrote it: a turn rewriting it at every checkpoint wrote the square of its length.
    const runtime = JSON.parse(await readFile(files(id).runtime, 'utf8')) as { activeTurn: ActiveTurn };
    expect(runtime.activeTurn.delta).toEqual([]);
    const journal = (await lines(files(id).journal)).map((line) => JSON.parse(line) as { keep: number; entries: SessionEntry[] });
    expect(journal).toHaveLength(36);
    // Each line carries the round under way only: the rounds before it are kept by count.
    expect(journal.map((line) => [line.keep, line.entries.map((entry) => entry.id)])).toEqual(
      Array.from({ length: 12 }, (_, round) => Array.from({ length: 3 }, () => [round, [`r${round}`]])).flat());
    // A reader after a restart sees the turn as the last checkpoint left it.
    const held = await sessions.read(id);
    const reread = await another().read(id);
    expect(calls(reread.entries)).toEqual(calls(held.entries));
    expect(calls(reread.entries)).toEqual(turn.delta.flatMap((entry) => entry.toolCalls!).map((call) => [call.id, 'finished', call.result]));
    expect(reread.recoveryTurnID).toBe('t1');
  });

  it('writes a call that finished, not its round again: a wide round\'s checkpoints stay the size of a call', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    const base = await sessions.save({ id, entries: [{ id: 'u1', type: 'user', content: 'read them all' }] });
    const turn: ActiveTurn = await sessions.beginTurn(id, { turnID: 't1', userEntryID: 'u1', baseRevision: base.revision });
    sessions.setStreaming(id, true);
    const records: ToolCallRecord[] = Array.from({ length: 40 }, (_, call) => ({ id: `c${call}`, name: 'block_get', arguments: { n: call }, state: 'pending' }));
    turn.delta.push({ id: 'r0', type: 'assistant', content: '', toolCalls: records });
    await sessions.saveTurn(id, turn);
    for (const [call, record] of records.entries()) {
      Object.assign(record, { state: 'executing' });
      await sessions.saveTurn(id, turn);
      Object.assign(record, { state: 'finished', result: result(call) });
      await sessions.saveTurn(id, turn);
    }
    const sizes = (await lines(files(id).journal)).map((line) => Buffer.byteLength(line));
    expect(sizes).toHaveLength(81);
    // The round's first line names its 40 calls; every later one carries the call that changed (a result of about 4 kB).
    expect(Math.max(...sizes.slice(1))).toBeLessThan(2 * Buffer.byteLength(result(39)));
    const reread = await another().read(id);
    expect(calls(reread.entries)).toEqual(records.map((record) => [record.id, 'finished', record.result]));
  });

  it('a new session of an id whose removal a crash cut short starts without the runtime left in its folder', async () => {
    const { sessions, files } = await store();
    const { id } = await turnWithRounds(sessions, 1);
    sessions.setStreaming(id, false);
    // What a removal cut short can leave: the runtime and its journal, no session.json.
    const kept = { runtime: await readFile(files(id).runtime), journal: await readFile(files(id).journal) };
    await sessions.delete(id);
    await mkdir(join(files(id).runtime, '..'), { recursive: true });
    await writeFile(files(id).runtime, kept.runtime);
    await writeFile(files(id).journal, kept.journal);
    const created = await sessions.save({ id, entries: [{ id: 'n1', type: 'user', content: 'a new start' }] });
    expect((await sessions.read(id)).recoveryTurnID).toBeUndefined();
    const turn = await sessions.beginTurn(id, { turnID: 't2', userEntryID: 'n1', baseRevision: created.revision });
    expect(turn.turnID).toBe('t2');
  });

  it('folds the journal into runtime.json when it outgrows it and when the kernel closes, and a commit clears the turn', async () => {
    const { sessions, files, another } = await store();
    sessions.setJournalLimits({ minBytes: 16_384, shareOfSession: 1 });
    const { id, turn } = await turnWithRounds(sessions, 10);
    // Folded along the way: runtime.json holds most of the turn, the journal less than the limit.
    const folded = JSON.parse(await readFile(files(id).runtime, 'utf8')) as { activeTurn: ActiveTurn };
    expect(folded.activeTurn.delta.length).toBeGreaterThan(5);
    expect((await readFile(files(id).journal)).length).toBeLessThanOrEqual(Math.max(16_384, JSON.stringify(folded).length * 2));
    await sessions.finalizeTurn(id, 't1', 'finished');
    sessions.setStreaming(id, false);
    await sessions.save({ id, entries: (await sessions.readStored(id)).entries, commitTurnID: 't1' });
    await sessions.close();
    expect(existsSync(files(id).journal)).toBe(false);
    const cleared = JSON.parse(await readFile(files(id).runtime, 'utf8')) as { activeTurn?: unknown; revision: number };
    expect(cleared.activeTurn).toBeUndefined();
    const session = await another().read(id);
    expect(session.recoveryTurnID).toBeUndefined();
    expect(calls(session.entries)).toEqual(turn.delta.flatMap((entry) => entry.toolCalls!).map((call) => [call.id, 'finished', call.result]));
  });

  it('ignores a last checkpoint a crash cut short and reads the turn as the one before left it', async () => {
    const { sessions, files, another } = await store();
    const { id } = await turnWithRounds(sessions, 2);
    await appendFile(files(id).journal, '{"v":1,"revision":99,"keep":2,"entries":[{"id":"lost"');
    const reader = another();
    const view = await reader.read(id);
    // The turn had no stream behind it: interrupted now, with every call it finished.
    expect([view.recoveryTurnID, view.recoveryState]).toEqual(['t1', 'interrupted']);
    expect(calls(view.entries).map(([callId, state]) => [callId, state])).toEqual([['c0_0', 'finished'], ['c0_1', 'finished'], ['c1_0', 'finished'], ['c1_1', 'finished']]);
    expect(await readFile(files(id).journal, 'utf8')).not.toContain('lost');
  });

  it('reads a runtime.json written whole by a kernel before the journal', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [{ id: 'u1', type: 'user', content: 'question' }] });
    const turn = { turnID: 'old', mode: 'append', userEntryID: 'u1', baseRevision: 1, state: 'finished', draftContent: '', snapshotIDs: [], promptTokens: 3, completionTokens: 4, updatedAt: new Date().toISOString(),
      delta: [{ id: 'a', type: 'assistant', content: 'an answer from before' }] };
    await writeFile(files(id).runtime, JSON.stringify({ schemaVersion: 1, revision: 7, sessionID: id, permissionMode: 'auto', activeTurn: turn }));
    const reader = another();
    const view = await reader.read(id);
    expect([view.recoveryTurnID, view.recoveryRevision, view.permissionMode, view.entries.at(-1)?.content]).toEqual(['old', 7, 'auto', 'an answer from before']);
    const committed = await reader.commitEndedTurn(id);
    expect([committed.recoveryTurnID, committed.entries.at(-1)?.content, committed.completionTokens]).toEqual([undefined, 'an answer from before', 4]);
    expect((await lines(files(id).journal)).map((line) => (JSON.parse(line) as { revision: number }).revision)).toEqual([8]);
  });
});
