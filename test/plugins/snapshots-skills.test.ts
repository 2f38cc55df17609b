import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IntentJournal } from '../../core/fs/intent-journal.js';
import { finishInterrupted, type FileChange } from '../../plugins/snapshots/file-change.js';
import { SnapshotRepo } from '../../plugins/snapshots/snapshot-repo.js';
import { filesUnder } from './skills/skills-harness.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A workspace with data/ and skills/, and its repository opened as a new process would. */
async function workspace() {
  const root = await mkdtemp(join(tmpdir(), 'quire-snapskills-'));
  roots.push(root);
  const data = join(root, 'data');
  const skills = join(root, 'skills');
  const put = async (folder: string, path: string, content: string | Buffer) => {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), content);
  };
  await put(data, 'nb/doc.json', '{"id":"doc","text":"first"}');
  await put(skills, 'alpha/SKILL.md', '---\nname: alpha\ndescription: A.\n---\nAlpha.\n');
  await put(skills, 'alpha/references/deep/guide.md', 'guide\n');
  await put(skills, 'alpha/.env.example', 'KEY=\n');
  await put(skills, 'beta/SKILL.md', '---\nname: beta\ndescription: B.\n---\nBeta.\n');
  const journal = () => new IntentJournal<FileChange>(join(root, '.quire', 'journal', 'snapshots'));
  const open = () => new SnapshotRepo(join(root, 'repo'), data, journal(), undefined, { skillsDir: skills });
  const contents = async (folder: string) => {
    const out: Record<string, string> = {};
    for (const path of await filesUnder(folder)) out[path] = await readFile(join(folder, path), 'utf8');
    return out;
  };
  return { root, data, skills, put, open, journal, contents };
}

describe('snapshots of skills/', () => {
  it("holds every file of every skill (a skill's dot-files too), but not skills/' own dot entries or writes in progress, and restores skills/ exactly", async () => {
    const ws = await workspace();
    await ws.put(ws.skills, '.staging/leftover.md', 'not a skill');
    await ws.put(ws.skills, 'beta/.SKILL.md.0123456789ab.tmp', 'a write in progress');
    const repo = ws.open();
    const snapshot = await repo.create('first', 'person:test');
    expect(Object.keys(snapshot.skills!).sort()).toEqual(['alpha/.env.example', 'alpha/SKILL.md', 'alpha/references/deep/guide.md', 'beta/SKILL.md']);
    expect(Object.keys(snapshot.files)).toEqual(['nb/doc.json']);
    await rm(join(ws.skills, 'beta/.SKILL.md.0123456789ab.tmp'));
    const before = await ws.contents(ws.skills);

    await ws.put(ws.skills, 'alpha/SKILL.md', '---\nname: alpha\ndescription: Changed.\n---\n');
    await rm(join(ws.skills, 'alpha/references'), { recursive: true });
    await rm(join(ws.skills, 'beta'), { recursive: true });
    await ws.put(ws.skills, 'gamma/SKILL.md', '---\nname: gamma\ndescription: G.\n---\n');
    await ws.put(ws.skills, 'gamma/a/b/c.md', 'deep');
    const restored = await ws.open().rollback(snapshot.id);
    expect(restored.skills).toEqual({ added: ['alpha/references/deep/guide.md', 'beta/SKILL.md'], removed: ['gamma/SKILL.md', 'gamma/a/b/c.md'], changed: ['alpha/SKILL.md'] });
    expect(await ws.contents(ws.skills)).toEqual(before);
    expect(existsSync(join(ws.skills, 'gamma'))).toBe(false);
    // A rollback to a snapshot without skills empties skills/ but keeps the folder, and its dot entries stay untouched.
    await rm(join(ws.skills, 'alpha'), { recursive: true });
    await rm(join(ws.skills, 'beta'), { recursive: true });
    const none = await ws.open().create('no skills', 'person:test');
    expect(none.skills).toEqual({});
    await ws.open().rollback(snapshot.id);
    expect(await ws.contents(ws.skills)).toEqual(before);
    await rm(join(ws.skills, '.staging'), { recursive: true });
    await ws.open().rollback(none.id);
    expect(existsSync(ws.skills)).toBe(true);
    expect(await filesUnder(ws.skills)).toEqual([]);
  });

  it('finishes a rollback of skills a crash cut short at the next start; a journal entry written before skills were covered applies to data/ only', async () => {
    const ws = await workspace();
    const repo = ws.open();
    const snapshot = await repo.create('first', 'person:test');
    const before = await ws.contents(ws.skills);
    await ws.put(ws.skills, 'alpha/SKILL.md', 'ruined');
    await rm(join(ws.skills, 'beta'), { recursive: true });
    await ws.put(ws.skills, 'gamma/SKILL.md', 'new');
    // The journal holds the change (as a rollback writes it before touching any file), then the process dies.
    const journal = ws.journal();
    await journal.begin({
      label: `rollback to snapshot ${snapshot.id}`, writes: [], removes: [],
      skills: { writes: [{ path: 'alpha/SKILL.md', hash: snapshot.skills!['alpha/SKILL.md']!.hash }, { path: 'beta/SKILL.md', hash: snapshot.skills!['beta/SKILL.md']!.hash }], removes: ['gamma/SKILL.md'] },
    });
    // An entry from an older kernel: data/ only, no skills part.
    await ws.put(ws.data, 'nb/doc.json', 'ruined');
    await journal.begin({ label: 'older rollback', writes: [{ path: 'nb/doc.json', hash: snapshot.files['nb/doc.json']!.hash }], removes: [] });
    const next = ws.open();
    expect(await finishInterrupted(next.roots, next.objects, ws.journal())).toEqual({ labels: [`rollback to snapshot ${snapshot.id}`, 'older rollback'], kept: [] });
    expect(await ws.contents(ws.skills)).toEqual(before);
    expect(await readFile(join(ws.data, 'nb/doc.json'), 'utf8')).toBe('{"id":"doc","text":"first"}');
    expect(await ws.journal().pending()).toEqual([]);
  });

  it('hashes every skill file again after a newest record without a skills table, and purge and verify count skill objects', async () => {
    const ws = await workspace();
    const repo = ws.open();
    const first = await repo.create('first', 'person:test');
    const recordPath = join(ws.root, 'repo', 'snapshots', `${first.id}.json`);
    const { skills: _dropped, ...old } = JSON.parse(await readFile(recordPath, 'utf8')) as Record<string, unknown>;
    await writeFile(recordPath, `${JSON.stringify(old)}\n`);
    const fresh = ws.open();
    const second = await fresh.create('second', 'person:test');
    expect(second.skills).toEqual(first.skills);
    expect(await fresh.purge()).toEqual({ removed: 0 });
    const verified = await fresh.verify();
    expect(verified.damaged).toEqual([]);
    expect(verified.objects).toBe(5);
  });
});
