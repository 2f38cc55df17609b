import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sse, useProviderKernel } from '../providers/provider-harness.js';
import { filesUnder, skillMd, writeTree } from './skills-harness.js';

const { start } = useProviderKernel();

const MEETING = skillMd('name: meeting-notes\ndescription: How to write meeting notes.', '# Meeting notes\n\nDecisions first.\n');
const MEETING_BY_AGENT = skillMd('name: meeting-notes\ndescription: Meeting notes, as the agent rewrote them.', '# Meeting notes\n\nActions first.\n');
const OLD = skillMd('name: old-skill\ndescription: An old skill the agent removes.', '# Old\n\nStill useful.\n');
const WEEKLY = skillMd('name: weekly-review\ndescription: A weekly review of open tasks.', '# Weekly review\n\nList open tasks.\n');
const PERSON = skillMd('name: person-skill\ndescription: Written by the person after the turn.');

/** Every file under a folder with its bytes: what "restored exactly" compares. */
async function contents(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const path of await filesUnder(root)) out[path] = (await readFile(join(root, path))).toString('base64');
  return out;
}

interface Rolled { mode: string; conflicts: { path: string }[]; undone: { path: string }[] }
interface Listed { skills: { name: string; description: string }[]; broken: unknown[] }
interface Versions { versions: { version: string; op: string; by: string; files: string[]; description: string }[] }

/**
 * Skills by hand, then an agent turn (loopback fake provider, every write approved) that saves a new skill
 * with a reference file, replaces one skill's SKILL.md and removes another skill.
 */
async function skillTurn() {
  const kit = await start('openai-chat');
  const { kernel, fake, http, session, turn, act } = kit;
  const skillsDir = join(kernel.workspace.root, 'skills');
  await writeTree(skillsDir, {
    'meeting-notes/SKILL.md': MEETING,
    'meeting-notes/references/guide.md': 'A guide the save keeps.\n',
    'old-skill/SKILL.md': OLD,
    'old-skill/templates/deep/t.md': 'nested template\n',
    'old-skill/logo.bin': Buffer.from([0, 1, 2, 255, 254]),
  });
  const before = await contents(skillsDir);
  fake.reply(
    sse('openai-chat', { calls: [
      { id: 'call_new', name: 'skill_save', args: { name: 'weekly-review', content: WEEKLY, files: { 'references/checklist.md': '- open tasks\n' } } },
      { id: 'call_replace', name: 'skill_save', args: { name: 'meeting-notes', content: MEETING_BY_AGENT } },
      { id: 'call_remove', name: 'skill_remove', args: { name: 'old-skill' } },
    ] }),
    sse('openai-chat', { text: 'Skills updated.' }),
  );
  const sessionId = await session();
  const { events } = await turn(sessionId, 'tidy my skills');
  expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
  const turnId = events[0]!.data.turnID as string;
  expect(existsSync(join(skillsDir, 'old-skill'))).toBe(false);
  expect(await readFile(join(skillsDir, 'meeting-notes/SKILL.md'), 'utf8')).toBe(MEETING_BY_AGENT);
  const rollback = async (force?: boolean) => {
    const response = await http('POST', `/api/agent/sessions/${sessionId}/turns/${turnId}/rollback`, force === undefined ? {} : { force });
    expect(response.status).toBe(200);
    return (await response.json()) as Rolled;
  };
  const names = async () => (await act<Listed>('skill_list', {})).skills.map((skill) => skill.name).sort();
  return { kernel, act, skillsDir, before, rollback, names };
}

describe('skills under snapshots and history', () => {
  it("rolls back an agent turn that saved one skill and removed another: skills/ is exactly as before, and the catalog sees it", async () => {
    const { act, skillsDir, before, rollback, names } = await skillTurn();
    expect(await names()).toEqual(['meeting-notes', 'weekly-review']);
    const rolled = await rollback();
    expect(rolled).toMatchObject({ mode: 'restore', conflicts: [] });
    expect(await contents(skillsDir)).toEqual(before);
    // The folders the turn made are gone, not left empty.
    expect(existsSync(join(skillsDir, 'weekly-review'))).toBe(false);
    expect(await names()).toEqual(['meeting-notes', 'old-skill']);
    const listed = await act<Listed>('skill_list', {});
    expect(listed.skills.find((skill) => skill.name === 'meeting-notes')!.description).toBe('How to write meeting notes.');
    expect(listed.broken).toEqual([]);
    // What the rollback replaced or removed is kept as a version, as the skill tool's own writes are.
    const weekly = await act<Versions>('skill_versions', { name: 'weekly-review' });
    expect(weekly.versions.map((version) => version.op)).toEqual(['rollback']);
    expect(weekly.versions[0]!.files).toEqual(['SKILL.md', 'references/checklist.md']);
  });

  it("undoes only the turn's skill files when the person changed skills since, listing the file both changed as a conflict", async () => {
    const { act, skillsDir, before, rollback, names } = await skillTurn();
    await act('skill_save', { name: 'person-skill', content: PERSON });
    const edited = WEEKLY.replace('List open tasks.', 'List open tasks, edited by the person.');
    await writeFile(join(skillsDir, 'weekly-review/SKILL.md'), edited);
    const rolled = await rollback();
    expect(rolled.mode).toBe('blocks');
    expect(rolled.conflicts).toEqual([{ path: 'skills/weekly-review/SKILL.md' }]);
    expect(rolled.undone.map((entry) => entry.path)).toEqual(expect.arrayContaining(['skills/old-skill/SKILL.md', 'skills/old-skill/logo.bin', 'skills/meeting-notes/SKILL.md', 'skills/weekly-review/references/checklist.md']));
    // The person's skill and edit stay; everything else the turn did is undone.
    const now = await contents(skillsDir);
    const { 'person-skill/SKILL.md': person, 'weekly-review/SKILL.md': weekly, ...rest } = now;
    expect(Buffer.from(person!, 'base64').toString()).toBe(PERSON);
    expect(Buffer.from(weekly!, 'base64').toString()).toBe(edited);
    expect(rest).toEqual(before);
    expect(await names()).toEqual(['meeting-notes', 'old-skill', 'person-skill', 'weekly-review']);
    // Forced, the conflict goes too: the skill the turn made is gone, the person's own skill stays.
    expect((await rollback(true)).conflicts).toEqual([]);
    expect(existsSync(join(skillsDir, 'weekly-review'))).toBe(false);
    expect(await names()).toEqual(['meeting-notes', 'old-skill', 'person-skill']);
  });

  it('restores data/ from a snapshot taken before skills were covered and leaves skills/ alone; newer snapshots keep their skill objects through purge', async () => {
    const { kernel, act } = await start('openai-chat');
    const skillsDir = join(kernel.workspace.root, 'skills');
    const notebook = await act<{ id: string }>('notebook_create', { name: 'N' });
    await act('skill_save', { name: 'weekly-review', content: WEEKLY });
    const old = await act<{ id: string }>('snapshot_create', { memo: 'from an older kernel' });
    // A record as kernels before this one wrote it: no skills table.
    const recordPath = join(kernel.workspace.root, 'repo', 'snapshots', `${old.id}.json`);
    const { skills: _dropped, ...record } = JSON.parse(await readFile(recordPath, 'utf8')) as Record<string, unknown>;
    await writeFile(recordPath, `${JSON.stringify(record)}\n`);
    const later = await act<{ id: string }>('document_create', { notebook: notebook.id, title: 'Later' });
    await act('skill_save', { name: 'weekly-review', content: WEEKLY.replace('open tasks.', 'open tasks, changed.') });
    await act('skill_save', { name: 'person-skill', content: PERSON });
    const skillsNow = await contents(skillsDir);
    const diff = await act<Record<string, unknown>>('snapshot_diff', { from: old.id });
    expect(diff.skills).toBeUndefined();
    const restored = await act<{ removed: string[]; skills?: unknown }>('snapshot_rollback', { id: old.id });
    expect(restored.removed).toEqual([`${notebook.id}/${later.id}.json`]);
    expect(restored.skills).toBeUndefined();
    expect(await contents(skillsDir)).toEqual(skillsNow);

    // A snapshot holding skills: purge keeps the skills' objects, and a rollback restores them.
    const withSkills = await act<{ id: string; skillFiles: number }>('snapshot_create', { memo: 'with skills' });
    expect(withSkills.skillFiles).toBe(2);
    await act('skill_remove', { name: 'person-skill' });
    await act('snapshot_purge', {});
    expect((await act<{ damaged: unknown[] }>('snapshot_verify', {})).damaged).toEqual([]);
    const back = await act<{ skills: { added: string[] } }>('snapshot_rollback', { id: withSkills.id });
    expect(back.skills.added).toEqual(['person-skill/SKILL.md']);
    expect(await contents(skillsDir)).toEqual(skillsNow);
  });

  it("keeps a replaced, renamed or removed skill's files as versions that can be listed and restored", async () => {
    const { kernel, act } = await start('openai-chat');
    const skillsDir = join(kernel.workspace.root, 'skills');
    await act('skill_save', { name: 'weekly-review', content: WEEKLY, files: { 'references/a.md': 'first reference\n' } });
    const second = WEEKLY.replace('List open tasks.', 'List open tasks by notebook.');
    await act('skill_save', { name: 'weekly-review', content: second });
    const listed = await act<Versions>('skill_versions', { name: 'weekly-review' });
    expect(listed.versions).toHaveLength(1);
    expect(listed.versions[0]).toMatchObject({ op: 'save', by: 'person:alice', files: ['SKILL.md', 'references/a.md'], description: 'A weekly review of open tasks.' });
    const shown = await act<{ skillMd: string }>('skill_versions', { name: 'weekly-review', version: listed.versions[0]!.version });
    expect(shown.skillMd).toBe(WEEKLY);

    await act('skill_restore_version', { name: 'weekly-review', version: listed.versions[0]!.version });
    expect(await readFile(join(skillsDir, 'weekly-review/SKILL.md'), 'utf8')).toBe(WEEKLY);
    const afterRestore = await act<Versions>('skill_versions', { name: 'weekly-review' });
    expect(afterRestore.versions.map((version) => version.op)).toEqual(['restore', 'save']);
    expect((await act<{ skillMd: string }>('skill_versions', { name: 'weekly-review', version: afterRestore.versions[0]!.version })).skillMd).toBe(second);

    // A removed skill comes back whole from its version; so does the name a rename left.
    await act('skill_rename', { name: 'weekly-review', newName: 'friday-review' });
    expect((await act<Versions>('skill_versions', { name: 'weekly-review' })).versions[0]!.op).toBe('rename');
    const removed = await act<{ version: string }>('skill_remove', { name: 'friday-review' });
    const all = await act<{ skills: { name: string; versions: number }[] }>('skill_versions', {});
    expect(all.skills.map((skill) => skill.name)).toEqual(['friday-review', 'weekly-review']);
    await act('skill_restore_version', { name: 'friday-review', version: removed.version });
    expect(await filesUnder(join(skillsDir, 'friday-review'))).toEqual(['SKILL.md', 'references/a.md']);
    expect(await readFile(join(skillsDir, 'friday-review/references/a.md'), 'utf8')).toBe('first reference\n');
  });
});
