import type { ActionHandler } from '../../core/index.js';
import { parseSkillDocument } from './skill-document.js';
import { skillError } from './skill-limits.js';
import type { PackageFile } from './skill-package.js';
import type { SkillStore } from './skill-store.js';
import { bytesOf } from './skill-versions.js';

/**
 * `versions`: the kept versions of one skill, newest first (with `version`, that one with its
 * SKILL.md text), or without a name the skills that have versions, removed ones included.
 */
export const versions = (store: SkillStore): ActionHandler => async (input) => {
  const { name, version } = input as { name?: string; version?: string };
  if (name === undefined) {
    if (version !== undefined) throw skillError('NAME_MISSING', 'a version is looked up within a skill: give its name too', { version });
    return { skills: await store.versions.skills() };
  }
  if (version === undefined) return { name, versions: await store.versions.list(name) };
  const found = await store.versions.read(name, version);
  const skillMd = found.files.find((file) => file.path === 'SKILL.md');
  return {
    name, version: found.version, op: found.op, by: found.by, time: found.time,
    files: found.files.map((file) => ({ path: file.path, bytes: bytesOf(file).length })),
    ...(skillMd?.encoding === 'utf8' ? { skillMd: skillMd.data } : {}),
  };
};

/**
 * `restore_version`: puts a kept version back as the skill's whole folder (also a removed skill); the
 * skill as it is now, if any, is kept as a version first. Checked like a save.
 */
export const restoreVersion = (store: SkillStore): ActionHandler => async (input, call) => {
  const { name, version } = input as { name: string; version: string };
  const found = await store.versions.read(name, version);
  const skillMd = found.files.find((file) => file.path === 'SKILL.md');
  if (!skillMd || skillMd.encoding !== 'utf8') throw skillError('NO_SKILL', `the version '${version}' of '${name}' holds no readable SKILL.md`, { name, version });
  const document = parseSkillDocument(skillMd.data, { folder: name, maxBodyChars: store.limits.maxBodyChars, path: `version ${version} of ${name}/SKILL.md` });
  const files: PackageFile[] = found.files.map((file) => ({ path: file.path, data: bytesOf(file), mode: 0o644 }));
  const skill = { name, from: `version ${version}`, document, files };
  store.checkSize(skill);
  return store.writer.exclusive(async () => {
    const answer = await store.putNow([skill], call, { replace: true, dryRun: false, op: 'restore' });
    const written = 'installed' in answer ? answer.installed[0] : undefined;
    return { name, version, files: files.map((file) => file.path).sort(), replaced: written?.replaced ?? false, warnings: written?.warnings ?? [], ...('updatedBy' in answer ? { updatedBy: answer.updatedBy } : {}) };
  });
};
