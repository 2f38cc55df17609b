import { existsSync } from 'node:fs';
import { appendFile, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { FileSessionStore } from '../../../core/session/session-store.js';
import { caught, useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();

async function store() {
  const kernel = await boot();
  const folder = join(kernel.workspace.agentDir, 'sessions');
  const files = (id: string) => ({ session: join(folder, id, 'session.json'), journal: join(folder, id, 'session.journal.jsonl') });
  // Another store over the same files: what a reader after a restart, or another writer, sees.
  const another = () => new FileSessionStore(kernel.workspace);
  return { kernel, sessions: kernel.sessions, files, another };
}

const entry = (id: string, content = `text of ${id}`) => ({ id, type: 'user', content });
const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');

/** Saves `count` entries one at a time, each save appending one to what is stored. */
async function appendEntries(sessions: FileSessionStore, id: string, count: number, from = 0) {
  for (let i = from; i < from + count; i++) {
    const stored = await sessions.readStored(id);
    await sessions.save({ id, entries: [...stored.entries, entry(`e${i}`)], expectedRevision: stored.revision, last: i });
  }
}

describe('the session journal', () => {
  it('appends each save as one line with what changed, leaving session.json as first written, and reads back the same', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    await sessions.save({ id, title: 'Journal', entries: [entry('e0')], custom: { keep: [1, 2] } });
    const first = await readFile(files(id).session, 'utf8');
    await appendEntries(sessions, id, 5, 1);
    expect(await readFile(files(id).session, 'utf8')).toBe(first);
    const journal = (await lines(files(id).journal)).map((line) => JSON.parse(line) as { revision: number; keep: number; entries: { id: string }[]; set: Record<string, unknown> });
    expect(journal.map((line) => [line.revision, line.keep, line.entries.map((e) => e.id)])).toEqual([[2, 1, ['e1']], [3, 2, ['e2']], [4, 3, ['e3']], [5, 4, ['e4']], [6, 5, ['e5']]]);
    // Fields a save did not change are not repeated.
    expect(journal.every((line) => !('title' in line.set) && !('custom' in line.set))).toBe(true);
    const held = await sessions.readStored(id);
    const reread = await another().readStored(id);
    expect(reread).toEqual(held);
    expect(reread).toMatchObject({ revision: 6, title: 'Journal', custom: { keep: [1, 2] }, last: 5 });
  });

  it('keeps a field a save changes and one it leaves out, and replaces entries a save changed in the middle', async () => {
    const { sessions, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [entry('a'), entry('b'), entry('c')], extra: 'x', other: { n: 1 } });
    // A body as a client sends it: all new objects, equal where nothing changed.
    const body = JSON.parse(JSON.stringify(await sessions.readStored(id))) as Record<string, unknown>;
    delete body.extra;
    await sessions.save({ ...body, entries: [entry('a'), entry('b', 'edited'), entry('c')], other: { n: 2 }, expectedRevision: 1 });
    const reread = await another().readStored(id);
    expect(reread.entries.map((e) => [e.id, e.content])).toEqual([['a', 'text of a'], ['b', 'edited'], ['c', 'text of c']]);
    // A field the body leaves out stays (REFERENCE.md §4, step 6).
    expect(reread).toMatchObject({ other: { n: 2 }, extra: 'x', revision: 2 });
  });

  it('hands out the stored session frozen, the same object while its files are unchanged', async () => {
    const { sessions } = await store();
    const id = newId();
    await sessions.save({ id, entries: [entry('e0')] });
    const one = await sessions.readStored(id);
    expect(await sessions.readStored(id)).toBe(one);
    expect(() => { (one.entries[0] as { content?: string }).content = 'changed'; }).toThrow(TypeError);
    expect(() => { one.entries.push(entry('x') as never); }).toThrow(TypeError);
  });

  it('folds the journal into session.json when it would outgrow it, and when the kernel closes', async () => {
    const { kernel, sessions, files, another } = await store();
    sessions.setJournalLimits({ minBytes: 2048, shareOfSession: 0 });
    const id = newId();
    await sessions.save({ id, entries: [] });
    await appendEntries(sessions, id, 40);
    // Folded at least once: session.json is past its first revision, the journal shorter than the limit.
    expect(JSON.parse(await readFile(files(id).session, 'utf8')).revision).toBeGreaterThan(1);
    const journalBytes = existsSync(files(id).journal) ? (await stat(files(id).journal)).size : 0;
    expect(journalBytes).toBeLessThanOrEqual(2048);
    expect((await another().readStored(id)).entries.map((e) => e.id)).toEqual(Array.from({ length: 40 }, (_, i) => `e${i}`));
    await kernel.close();
    expect(existsSync(files(id).journal)).toBe(false);
    const whole = JSON.parse(await readFile(files(id).session, 'utf8'));
    expect([whole.revision, whole.entries.length, whole.last]).toEqual([41, 40, 39]);
  });

  it('notices a hand edit of session.json and reads it again, the saves after it applying on top', async () => {
    const { sessions, files } = await store();
    const id = newId();
    await sessions.save({ id, title: 'Before', entries: [entry('e0')] });
    await sessions.readStored(id);
    const edited = JSON.parse(await readFile(files(id).session, 'utf8'));
    await writeFile(files(id).session, JSON.stringify({ ...edited, title: 'Edited by hand' }));
    expect((await sessions.read(id)).title).toBe('Edited by hand');
    await appendEntries(sessions, id, 1, 1);
    // The next save goes on from the edited session.json.
    expect((await sessions.readStored(id))).toMatchObject({ title: 'Edited by hand', revision: 2 });
    await writeFile(files(id).session, '{ "broken');
    expect((await caught(sessions.readStored(id))).code).toBe('WORKSPACE_INVALID');
    expect(await readFile(files(id).session, 'utf8')).toBe('{ "broken');
  });

  it('notices another writer of the journal and reads the session again', async () => {
    const { sessions, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [entry('e0')] });
    expect((await sessions.readStored(id)).revision).toBe(1);
    await appendEntries(another(), id, 2, 1);
    expect((await sessions.readStored(id)).entries.map((e) => e.id)).toEqual(['e0', 'e1', 'e2']);
    expect((await caught(sessions.save({ id, entries: [], expectedRevision: 1 }))).details).toMatchObject({ revision: 3 });
  });

  it('ignores a last line a crash cut short, and cuts it off before the next save', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    await appendEntries(sessions, id, 2);
    await appendFile(files(id).journal, '{"v":1,"revision":4,"keep":2,"entries":[{"id":"lost"');
    expect((await sessions.readStored(id)).entries.map((e) => e.id)).toEqual(['e0', 'e1']);
    await appendEntries(sessions, id, 1, 2);
    expect((await lines(files(id).journal)).map((line) => JSON.parse(line).revision)).toEqual([2, 3, 4]);
    expect((await another().readStored(id)).entries.map((e) => e.id)).toEqual(['e0', 'e1', 'e2']);
  });

  it('skips lines session.json already holds (a crash between a fold and the removal of the journal)', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    await appendEntries(sessions, id, 3);
    const journal = await readFile(files(id).journal);
    await sessions.close();
    expect(existsSync(files(id).journal)).toBe(false);
    await writeFile(files(id).journal, journal);
    const reread = await another().readStored(id);
    expect([reread.revision, reread.entries.length]).toEqual([4, 3]);
    await appendEntries(another(), id, 1, 3);
    expect((await another().readStored(id)).entries.map((e) => e.id)).toEqual(['e0', 'e1', 'e2', 'e3']);
  });

  it('refuses a damaged complete line, or one that does not follow, and leaves both files as they are', async () => {
    const { sessions, files } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    await appendEntries(sessions, id, 2);
    for (const damage of ['not json\n', '{"v":1,"revision":9,"keep":0,"entries":[],"set":{},"unset":[]}\n']) {
      const original = await readFile(files(id).journal, 'utf8');
      const session = await readFile(files(id).session, 'utf8');
      await writeFile(files(id).journal, `${original}${damage}`);
      const error = await caught(sessions.save({ id, entries: [] }));
      expect([error.code, error.details?.line]).toEqual(['WORKSPACE_INVALID', 3]);
      expect(await readFile(files(id).journal, 'utf8')).toBe(`${original}${damage}`);
      expect(await readFile(files(id).session, 'utf8')).toBe(session);
      await writeFile(files(id).journal, original);
    }
  });

  it('does not replay a journal left by a deleted session onto a new one with the same id', async () => {
    const { sessions, files, another } = await store();
    const id = newId();
    await sessions.save({ id, entries: [] });
    await appendEntries(sessions, id, 2);
    const journal = await readFile(files(id).journal);
    await sessions.delete(id);
    // What a crash in the middle of removing the folder can leave.
    await sessions.save({ id, entries: [entry('other')] });
    await rm(files(id).session);
    await writeFile(files(id).journal, journal);
    await sessions.save({ id, entries: [entry('new')] });
    expect((await another().readStored(id))).toMatchObject({ revision: 1, entries: [entry('new')] });
  });
});
