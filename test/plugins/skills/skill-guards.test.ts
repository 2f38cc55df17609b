import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import { SKILLS_WRITES, type SkillsWrites } from '../../../plugins/skills/tokens.js';
import { caught } from '../../helpers/harness.js';
import { reader } from '../blocks/blocks-harness.js';
import { filesUnder, skillMd, useSkills, writeTree } from './skills-harness.js';

const { boot } = useSkills();

interface Versions { versions: { version: string; op: string }[] }

describe('skill writes that must not lose or leak anything', () => {
  it('refuses to rename a skill onto a broken one (its folder was swapped away, no version kept), and removes a broken skill keeping a version', async () => {
    const { kernel, skill } = await boot();
    const skills = join(kernel.workspace.root, 'skills');
    await skill('save', { name: 'alpha', content: skillMd('name: alpha\ndescription: The first.') });
    await writeTree(join(skills, 'beta'), { 'SKILL.md': 'no front matter here\n', 'notes.md': 'kept notes' });
    const refused = await caught(skill('rename', { name: 'alpha', newName: 'beta' }));
    expect([refused.code, refused.message]).toEqual(['CONFLICT', expect.stringContaining("a skill named 'beta' already exists (it is broken")]);
    expect(await filesUnder(join(skills, 'beta'))).toEqual(['SKILL.md', 'notes.md']);
    // Removed with the tool (it answered "broken", not found), its files kept as a version.
    const removed = await skill<{ removed: string; files: string[]; version?: string }>('remove', { name: 'beta' });
    expect([removed.removed, removed.files.sort(), typeof removed.version]).toEqual(['beta', ['SKILL.md', 'notes.md'], 'string']);
    expect(await filesUnder(join(skills, 'beta'))).toEqual([]);
    expect((await skill<Versions>('versions', { name: 'beta' })).versions.map((version) => version.op)).toEqual(['remove']);
  });

  it('writes nothing for an install stopped while it waited for its turn (it was told cancelled and wrote anyway)', async () => {
    const { kernel } = await boot();
    const source = join(kernel.workspace.root, '..', 'waiting');
    await mkdir(source, { recursive: true });
    await writeFile(join(source, 'SKILL.md'), skillMd('name: waiting\ndescription: Waits.'));
    const writes = kernel.container.resolve<SkillsWrites>(SKILLS_WRITES);
    let release!: () => void;
    const held = writes.exclusive(() => new Promise<void>((resolve) => { release = resolve; }));
    const controller = new AbortController();
    const call = kernel.pipeline.call({ target: 'skill_install', input: { path: source }, principal: { kind: 'person', name: 'alice', role: 'admin' }, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    // Its turn comes after the stop is noticed (the pipeline looks every 20 ms): the write must see it there.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    const outcome = await call.catch((error: unknown) => error);
    await held;
    await writes.exclusive(async () => undefined);
    expect(outcome).toMatchObject({ code: 'ACTION_CANCELLED' });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual([]);
  });

  it("are the agent's instructions, which a reader may not read: 403, and x-quire-role admin for every adminOnly read", async () => {
    const { kernel, skill } = await boot();
    await skill('save', { name: 'alpha', content: skillMd('name: alpha\ndescription: The first.') });
    for (const action of ['list', 'load', 'versions']) {
      const refused = await caught(skill(action, action === 'load' ? { name: 'alpha' } : {}, reader));
      expect([action, refused.code, refused.message]).toEqual([action, 'FORBIDDEN', expect.stringContaining(`skill_${action} is for administrators and the agent`)]);
    }
    const app = createHttpApp(kernel);
    const document = await (await app.request('/api/openapi.json')).json() as { paths: Record<string, { post?: { 'x-quire-role'?: string } }> };
    const roles = Object.fromEntries(['/api/actions/sql/sql/query', '/api/actions/snapshots/snapshot/list', '/api/actions/skills/skill/list', '/api/actions/search-fulltext/search/fulltext']
      .map((path) => [path, document.paths[path]?.post?.['x-quire-role']]));
    expect(roles).toEqual({ '/api/actions/sql/sql/query': 'admin', '/api/actions/snapshots/snapshot/list': 'admin', '/api/actions/skills/skill/list': 'admin', '/api/actions/search-fulltext/search/fulltext': 'reader' });
  });
});
