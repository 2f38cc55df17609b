import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { FileSessionStore } from '../../../core/session/session-store.js';
import type { SessionDocument } from '../../../core/session/session-types.js';
import type { Workspace } from '../../../core/workspace.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const STORE = join(REPO_ROOT, 'dist', 'core', 'session', 'session-store.js');
const KILLS = 20;

/**
 * A process that saves without end, printing `ack <i>` once save i has answered: plain saves that
 * append entry e<i>, some that also edit the first entry (the whole history changes), and every fifth
 * a whole turn (message, runtime turn, checkpoint, commit). Folds are made frequent by a small journal
 * limit. A turn left behind by the previous kill is committed first. It SIGKILLs itself just before
 * (or just after) its `killAt`-th file operation (open, write, sync, rename, remove, stat…), so the
 * kills land anywhere in a save, a fold or a commit, not only where timing happens to put them.
 */
function saver(agentDir: string, id: string, from: number, killAt: number, after: boolean): string {
  return `
    import fsp from 'node:fs/promises';
    import { syncBuiltinESMExports } from 'node:module';
    let operations = 0;
    const count = () => { if (++operations === ${killAt}) process.kill(process.pid, 'SIGKILL'); };
    const wrap = (owner, name) => {
      const original = owner[name];
      owner[name] = async function (...args) {
        if (!${after}) count();
        const result = await original.apply(this, args);
        if (${after}) count();
        return result;
      };
    };
    const probe = await fsp.open(process.execPath, 'r');
    const handle = Object.getPrototypeOf(probe);
    await probe.close();
    for (const name of ['open', 'rename', 'rm', 'unlink', 'stat', 'mkdir', 'readFile', 'writeFile']) wrap(fsp, name);
    for (const name of ['writeFile', 'write', 'datasync', 'sync', 'truncate', 'stat', 'readFile', 'close']) wrap(handle, name);
    syncBuiltinESMExports();
    const { FileSessionStore } = await import(${JSON.stringify(STORE)});
    const store = new FileSessionStore({ agentDir: ${JSON.stringify(agentDir)} });
    store.setJournalLimits({ minBytes: 4096, shareOfSession: 0.25 });
    const id = ${JSON.stringify(id)};
    const ack = (line) => new Promise((resolve) => process.stdout.write(line + '\\n', resolve));
    const left = await store.read(id);
    if (left.recoveryTurnID) await store.save({ id, entries: (await store.readStored(id)).entries, commitTurnID: left.recoveryTurnID });
    for (let i = ${from}; ; i++) {
      const stored = await store.readStored(id);
      const entries = [...stored.entries, { id: 'e' + i, type: 'user', content: 'question ' + i + ' ' + 'x'.repeat(i % 200) }];
      if (i % 3 === 1) entries[0] = { ...entries[0], content: 'first entry, edited by save ' + i };
      const base = await store.save({ id, entries, expectedRevision: stored.revision, last: i });
      if (i % 5 === 4) {
        const turn = await store.beginTurn(id, { turnID: 't' + i, userEntryID: 'e' + i, baseRevision: base.revision });
        store.setStreaming(id, true);
        await store.saveTurn(id, { ...turn, delta: [{ id: 'x', type: 'assistant', content: 'answer ' + i }] });
        await store.finalizeTurn(id, turn.turnID, 'finished');
        store.setStreaming(id, false);
        await store.save({ id, entries: base.session.entries, commitTurnID: turn.turnID });
      }
      await ack('ack ' + i);
    }
  `;
}

/** Runs the saver until it kills itself; returns every save it acknowledged (read to the end of its output). */
async function runUntilKilled(agentDir: string, id: string, from: number, killAt: number, after: boolean): Promise<number[]> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', saver(agentDir, id, from, killAt, after)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (code, signalCode) => resolve([code, signalCode])));
  expect(signal).toBe('SIGKILL');
  // Only whole lines: an ack is written once its save has answered.
  return output.split('\n').slice(0, -1).map((line) => Number(line.split(' ')[1]));
}

/** What every read after a crash must hold: each acknowledged save, in order, and nothing half-applied. */
function checkSession(session: SessionDocument, acknowledged: readonly number[]): number {
  const ids = session.entries.map((entry) => entry.id);
  expect(new Set(ids).size).toBe(ids.length);
  const numbers = ids.filter((entryId) => /^e\d+$/.test(entryId)).map((entryId) => Number(entryId.slice(1)));
  expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  for (const i of acknowledged) {
    expect(numbers).toContain(i);
    // A turn is acknowledged once committed: its answer is there too.
    if (i % 5 === 4) expect(session.entries.some((entry) => entry.type === 'assistant' && entry.content === `answer ${i}`)).toBe(true);
  }
  const newest = Math.max(-1, ...numbers);
  // The field and the entry come from the same save: never one without the other.
  expect(session.last ?? -1).toBe(newest);
  return newest;
}

describe('the session journal under SIGKILL', () => {
  const { tempDir } = useHarness();

  it(`holds every acknowledged save after ${KILLS} kills at random file operations of saves, folds and commits, and reads every time`, async () => {
    const agentDir = join(await tempDir(), 'agent');
    await mkdir(join(agentDir, 'sessions'), { recursive: true });
    const id = newId();
    const open = () => new FileSessionStore({ agentDir } as Workspace);
    await open().save({ id, title: 'Crash', entries: [{ id: 'first', type: 'user', content: 'first entry' }] });
    const acknowledged: number[] = [];
    let next = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      // A save is some ten to twenty file operations: this reaches a few dozen saves in.
      acknowledged.push(...await runUntilKilled(agentDir, id, next, 1 + Math.floor(Math.random() * 600), Math.random() < 0.5));
      const store = open();
      const view = await store.read(id);
      const newest = checkSession(await store.readStored(id), acknowledged);
      expect(view.title).toBe('Crash');
      next = newest + 1;
    }
    // After the last kill the session still takes saves, and another reader agrees with the writer.
    const store = open();
    const left = await store.read(id);
    if (typeof left.recoveryTurnID === 'string') await store.save({ id, entries: (await store.readStored(id)).entries, commitTurnID: left.recoveryTurnID });
    const stored = await store.readStored(id);
    await store.save({ id, entries: [...stored.entries, { id: `e${next}`, type: 'user', content: 'after the crashes' }], expectedRevision: stored.revision, last: next });
    const reread = await open().readStored(id);
    expect([checkSession(reread, acknowledged), reread.entries.at(-1)?.content]).toEqual([next, 'after the crashes']);
    expect(await open().readStored(id)).toEqual(await store.readStored(id));
  }, 120_000);
});
