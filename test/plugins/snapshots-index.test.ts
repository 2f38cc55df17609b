import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntentJournal } from '../../core/fs/intent-journal.js';
import type { FileChange } from '../../plugins/snapshots/file-change.js';
import { SnapshotRepo } from '../../plugins/snapshots/snapshot-repo.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A workspace's data/ with `count` documents, and a way to open its repository as a new process would. */
async function workspace(count: number) {
  const root = await mkdtemp(join(tmpdir(), 'quire-snapindex-'));
  roots.push(root);
  const data = join(root, 'data');
  await mkdir(join(data, 'nb'), { recursive: true });
  const write = (i: number, text: string) => writeFile(join(data, 'nb', `doc-${i}.json`), text);
  for (let i = 0; i < count; i++) await write(i, `{"id":"doc-${i}","text":"first version of ${i}"}`);
  const open = () => new SnapshotRepo(join(root, 'repo'), data, new IntentJournal<FileChange>(join(root, '.quire', 'journal', 'snapshots')));
  const index = join(root, 'repo', 'index.jsonl');
  const objectFiles = async () => (await readdir(join(root, 'repo', 'objects'), { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
  return { root, data, write, open, index, objectFiles };
}

const ids = async (repo: SnapshotRepo) => (await repo.list()).map((snapshot) => snapshot.id);

describe('the snapshot index follows the records', () => {
  it('is rebuilt from the records when it is missing, and says the same as before', async () => {
    const ws = await workspace(3);
    const repo = ws.open();
    const made = [];
    for (let i = 0; i < 3; i++) {
      await ws.write(i, `{"changed":${i}}`);
      made.push((await repo.create(`step ${i}`, 'person:test')).id);
    }
    const listed = await repo.list();
    expect(listed.map((snapshot) => snapshot.id)).toEqual(made);
    await rm(ws.index);
    const fresh = ws.open();
    expect(await fresh.list()).toEqual(listed);
    expect((await fresh.latest())!.id).toBe(made[2]);
    // Written back: a third process reads the index, not the records.
    expect((await readFile(ws.index, 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('keeps a snapshot whose index line a crash lost, and a torn last line costs only that line', async () => {
    const ws = await workspace(4);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    const lineOfFirst = (await stat(ws.index)).size;
    await ws.write(1, '{"changed":true}');
    const second = await repo.create('second', 'person:test');
    // As a crash after the second record was durable and before (or while) its line was appended.
    await truncate(ws.index, lineOfFirst);
    await appendFile(ws.index, '{"add":{"id":"2026');
    const fresh = ws.open();
    expect(await ids(fresh)).toEqual([first.id, second.id]);
    const latest = (await fresh.latest())!;
    expect(latest.id).toBe(second.id);
    expect(latest.files['nb/doc-1.json']!.hash).toBe(second.files['nb/doc-1.json']!.hash);
    const third = await fresh.create('third', 'person:test');
    expect(third.parent).toBe(second.id);
    // The torn line is on its own and skipped; every later line reads.
    expect(await ids(ws.open())).toEqual([first.id, second.id, third.id]);
  });

  it('sees a snapshot another process took, and the newest file table it starts from', async () => {
    const ws = await workspace(2);
    const here = ws.open();
    const first = await here.create('first', 'person:test');
    expect((await here.latest())!.id).toBe(first.id);
    await ws.write(0, '{"changed":"elsewhere"}');
    const elsewhere = await ws.open().create('elsewhere', 'person:test');
    expect((await here.latest())!.id).toBe(elsewhere.id);
    const next = await here.create('next', 'person:test');
    expect(next.parent).toBe(elsewhere.id);
    expect(next.files).toEqual(elsewhere.files);
  });

  it('leaves out a record that does not parse, and verify names it', async () => {
    const ws = await workspace(1);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    const second = await repo.create('second', 'person:test');
    await rm(ws.index);
    await writeFile(join(ws.root, 'repo', 'snapshots', `${second.id}.json`), '{"id":');
    const fresh = ws.open();
    expect(await ids(fresh)).toEqual([first.id]);
    expect((await fresh.verify()).damaged).toEqual([{ object: `snapshot record ${second.id}`, reason: 'the record does not parse' }]);
  });

  it('drops a snapshot whose record is gone', async () => {
    const ws = await workspace(1);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    const second = await repo.create('second', 'person:test');
    await rm(join(ws.root, 'repo', 'snapshots', `${second.id}.json`));
    expect(await ids(repo)).toEqual([first.id]);
    expect((await repo.latest())!.id).toBe(first.id);
  });

  it('believes the record after a crash in the middle of a change of tags', async () => {
    const ws = await workspace(1);
    const repo = ws.open();
    const snapshot = await repo.create('tagged', 'person:test');
    await repo.setTags(snapshot.id, () => ['kept']);
    expect((await ws.open().list())[0]!.tags).toEqual(['kept']);
    // The record rewritten, the index's closing line lost: the `check` line before it sends the index to the record.
    await repo.setTags(snapshot.id, () => ['new']);
    const lines = (await readFile(ws.index, 'utf8')).trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toEqual({ tags: { id: snapshot.id, tags: ['new'] } });
    await writeFile(ws.index, `${lines.slice(0, -1).join('\n')}\n`);
    expect((await ws.open().list())[0]!.tags).toEqual(['new']);
    // Announced but the record not rewritten yet: the record's tags stand.
    await appendFile(ws.index, `${JSON.stringify({ check: snapshot.id })}\n`);
    expect((await ws.open().list())[0]!.tags).toEqual(['new']);
  });
});

describe('what a snapshot reads again', () => {
  it('reads a file changed right after a snapshot again even when its size and mtime are unchanged', async () => {
    const ws = await workspace(1);
    const repo = ws.open();
    const file = join(ws.data, 'nb', 'doc-0.json');
    // A whole millisecond, so that setting it back gives exactly the mtime the snapshot recorded.
    const stamp = new Date(Math.floor(Date.now()) - 5);
    // Each scan starts 5 ms after that mtime, as it would right after the write: left to the clock, a
    // scan slowed past the 50 ms margin by a loaded machine would rightly trust the file, and this test fail.
    const clock = vi.spyOn(Date, 'now').mockReturnValue(stamp.getTime() + 5);
    let first, second;
    try {
      await writeFile(file, 'version A');
      await utimes(file, stamp, stamp);
      first = await repo.create('first', 'person:test');
      await writeFile(file, 'version B');
      await utimes(file, stamp, stamp);
      second = await repo.create('second', 'person:test');
    } finally {
      clock.mockRestore();
    }
    expect([first.scanStarted, second.scanStarted]).toEqual([stamp.getTime() + 5, stamp.getTime() + 5]);
    expect(second.files['nb/doc-0.json']!.hash).not.toBe(first.files['nb/doc-0.json']!.hash);
    expect((await repo.objects.get(second.files['nb/doc-0.json']!.hash)).toString()).toBe('version B');
  });

  it('keeps the entry of a file untouched since well before the last snapshot without reading it', async () => {
    const ws = await workspace(2);
    const old = new Date(Date.now() - 60_000);
    for (const name of ['doc-0.json', 'doc-1.json']) await utimes(join(ws.data, 'nb', name), old, old);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    // Other content, same size and mtime: a snapshot that read it again would record another hash.
    await writeFile(join(ws.data, 'nb', 'doc-0.json'), '');
    await truncate(join(ws.data, 'nb', 'doc-0.json'), first.files['nb/doc-0.json']!.size);
    await utimes(join(ws.data, 'nb', 'doc-0.json'), old, old);
    const second = await repo.create('second', 'person:test');
    expect(second.files['nb/doc-0.json']).toEqual(first.files['nb/doc-0.json']);
  });
});

describe('objects of a large snapshot go in a pack', () => {
  it('stores, reads back, rolls back from, verifies and purges packed objects', async () => {
    const ws = await workspace(150);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    // One pack and its index instead of 150 files.
    expect((await ws.objectFiles()).filter((name) => name.endsWith('.pack'))).toHaveLength(1);
    expect(await ws.objectFiles()).toHaveLength(2);
    for (let i = 0; i < 100; i++) await ws.write(i, `{"second":${i}}`);
    const second = await repo.create('second', 'person:test');
    expect(await repo.verify()).toEqual({ snapshots: 2, objects: 250, damaged: [] });
    const restored = await repo.rollback(first.id);
    expect(restored.changed).toHaveLength(100);
    expect(await readFile(join(ws.data, 'nb', 'doc-7.json'), 'utf8')).toBe('{"id":"doc-7","text":"first version of 7"}');
    // Only the second snapshot kept: its 100 own objects and the 50 it shares with the first stay.
    await rm(join(ws.root, 'repo', 'snapshots', `${first.id}.json`));
    expect(await repo.purge()).toEqual({ removed: 100 });
    expect(await repo.verify()).toEqual({ snapshots: 1, objects: 150, damaged: [] });
    for (const path of Object.keys(second.files)) await repo.objects.get(second.files[path]!.hash);
  });

  it('merges small packs so that their number does not grow with the history', async () => {
    const ws = await workspace(10);
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    for (let step = 1; step <= 24; step++) {
      for (let i = 0; i < 5; i++) await ws.write((step + i) % 10, `{"step":${step},"doc":${i}}`);
      await repo.create(`step ${step}`, 'person:test');
    }
    const packs = (await ws.objectFiles()).filter((name) => name.endsWith('.pack'));
    expect(packs.length).toBeLessThanOrEqual(17);
    expect(await repo.verify()).toMatchObject({ snapshots: 25, damaged: [] });
    await repo.rollback(first.id);
    expect(await readFile(join(ws.data, 'nb', 'doc-3.json'), 'utf8')).toBe('{"id":"doc-3","text":"first version of 3"}');
  });

  it('ignores a pack a crash left without its index, and purge removes it', async () => {
    const ws = await workspace(2);
    const repo = ws.open();
    const snapshot = await repo.create('first', 'person:test');
    const packs = join(ws.root, 'repo', 'objects', 'pack');
    await mkdir(packs, { recursive: true });
    await writeFile(join(packs, 'pack-abc-0123456789.pack'), 'half written');
    await writeFile(join(packs, '.pack-abc-0123456789.idx.1234.tmp'), '{"objects":[');
    expect(await repo.verify()).toMatchObject({ snapshots: 1, damaged: [] });
    await repo.purge();
    expect(await readdir(packs)).toEqual([]);
    expect(await repo.verify()).toEqual({ snapshots: 1, objects: Object.keys(snapshot.files).length, damaged: [] });
  });
});
