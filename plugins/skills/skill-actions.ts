import { lstat, readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { ActionHandler } from '../../core/index.js';
import { fitBudget } from './skill-catalog.js';
import { checkName, parseSkillDocument, renamedSkillText } from './skill-document.js';
import { download } from './skill-download.js';
import { skillError } from './skill-limits.js';
import { groupPackage, readArchive, readArchiveFile, readFolder, type PackageFile } from './skill-package.js';
import { checkFileSet, checkFileSizes, checkRelativePath, isTextBuffer, readInside } from './skill-paths.js';
import { sha256 } from './skill-records.js';
import { writerOf, type SkillStore } from './skill-store.js';
import { restoreVersion, versions } from './skill-version-actions.js';

/** Front-matter fields other tools act on; read faithfully, but nothing here grants what they ask for. */
const NOT_APPLIED = ['allowed-tools', 'disallowed-tools', 'model', 'hooks', 'context', 'agent'];

type InstallInput = { replace?: boolean; dryRun?: boolean };

const list = (store: SkillStore): ActionHandler => async () => {
  const read = await store.catalog.read();
  const skills = [...read.skills.values()];
  const budget = fitBudget(skills, store.limits.promptTokenBudget);
  return {
    skills: skills.map((skill) => ({
      name: skill.name, description: skill.description, folder: store.shown(skill.folder), writable: skill.writable,
      tokens: skill.tokens, inPrompt: budget.listed.has(skill.name), files: skill.files.length, scripts: skill.scripts, warnings: skill.warnings,
      ...(skill.updatedBy ? { updatedBy: skill.updatedBy } : {}), lastUsed: skill.lastUsed,
    })),
    promptTokens: budget.tokens,
    promptTokenBudget: store.limits.promptTokenBudget,
    leftOutOfPrompt: [...budget.left].sort(),
    broken: read.broken.map((entry) => ({ ...entry, path: store.shown(entry.path) })),
  };
};

const load = (store: SkillStore): ActionHandler => async (input, call) => {
  const { name, file } = input as { name: string; file?: string };
  const { skill } = await store.find(name);
  // The agent's load times order the prompt's budget (a person reading a skill is not the agent using it);
  // losing one is no reason to fail the read.
  if (call.principal.kind === 'agent') await store.records.loaded(skill.name).catch(() => undefined);
  if (file !== undefined) {
    const data = await readInside(skill.folder, file, store.limits.maxFileBytes);
    if (!isTextBuffer(data)) throw skillError('NOT_TEXT', `'${file}' of the skill '${name}' is not text; only text files of a skill are read here`, { file });
    return { name, file: checkRelativePath(file), text: data.toString('utf8') };
  }
  const notApplied = NOT_APPLIED.filter((field) => field in skill.document.frontMatter);
  return {
    name, description: skill.description, body: skill.document.body,
    files: skill.files.map((entry) => entry.path).filter((path) => path !== 'SKILL.md'),
    warnings: [...skill.warnings, ...(notApplied.length > 0 ? [`front matter ${notApplied.join(', ')} is not applied here: what a tool may do is decided by the person's approvals, never by a skill`] : [])],
  };
};

const save = (store: SkillStore): ActionHandler => async (input, call) => {
  const { name, content, files: extra = {} } = input as { name: string; content: string; files?: Record<string, string> };
  checkName(name, 'the name');
  const document = parseSkillDocument(content, { folder: name, maxBodyChars: store.limits.maxBodyChars, path: 'SKILL.md' });
  const given: PackageFile[] = [{ path: 'SKILL.md', data: Buffer.from(content, 'utf8'), mode: 0o644 }];
  for (const [path, text] of Object.entries(extra)) {
    const checked = checkRelativePath(path, 'the file');
    if (checked === 'SKILL.md') throw skillError('PATH_DUPLICATE', `'${path}' is the SKILL.md itself: give it as content`, { path });
    given.push({ path: checked, data: Buffer.from(text, 'utf8'), mode: 0o644 });
  }
  checkFileSet(given.map((file) => file.path), 'the files given');
  // The files given; those kept beside them, or a version restored, stay as they were.
  checkFileSizes(given, store.limits.maxFileBytes, `the skill '${name}'`);
  // In the writer's turn from the read to the swap, so that two saves of one skill cannot drop each other's files.
  return store.writer.exclusive(async () => {
    // A replaced skill keeps its other files: an edit of SKILL.md does not drop its references.
    const current = (await store.catalog.read()).skills.get(name);
    const replacing = new Set(given.map((file) => file.path));
    // A broken skill (its SKILL.md did not parse) keeps its other files too: a fix of SKILL.md must not drop them.
    const kept = current ? (current.writable ? await store.keptFiles(current, replacing) : []) : await store.brokenFiles(name, replacing);
    const skill = { name, from: 'SKILL.md', document, files: [...given, ...kept] };
    // The given files with the ones kept: a file given as 'references' beside a kept 'references/a.md', or
    // 'Guide.md' beside 'guide.md', cannot both be written.
    checkFileSet(skill.files.map((file) => file.path), `the skill '${name}' with the files given`);
    store.checkSize(skill);
    const answer = await store.putNow([skill], call, { replace: true, dryRun: false });
    const written = 'installed' in answer ? answer.installed[0]! : undefined;
    return { name, written: given.map((file) => file.path), kept: kept.map((file) => file.path), replaced: written?.replaced ?? false, warnings: written?.warnings ?? [], updatedBy: writerOf(call) };
  });
};

const rename = (store: SkillStore): ActionHandler => async (input, call) => {
  const { name, newName } = input as { name: string; newName: string };
  checkName(newName, 'the new name');
  return store.writer.exclusive(async () => {
    const { skill, read } = await store.find(name);
    store.checkWritable(skill);
    // A broken skill there too: the catalog leaves it out, and the rename swapped its folder away, no version kept.
    if (read.skills.has(newName) || await store.occupied(newName)) {
      throw skillError('SKILL_EXISTS', `a skill named '${newName}' already exists${read.skills.has(newName) ? '' : ' (it is broken: skill_list says why)'}`, { name: newName });
    }
    store.checkNotStopped(call);
    const renamed = renamedSkillText(await readFile(join(skill.folder, 'SKILL.md'), 'utf8'), newName);
    const moved = await store.keptFiles(skill, new Set(['SKILL.md']));
    await store.versions.keep(name, 'rename', writerOf(call));
    await store.writer.commit([{ name: newName, files: [{ path: 'SKILL.md', data: Buffer.from(renamed, 'utf8'), mode: 0o644 }, ...moved] }]);
    await store.writer.remove(name);
    await store.records.renamed(name, newName);
    await store.records.written(newName, { updatedBy: writerOf(call), sha256: sha256(renamed) });
    return { name: newName, from: name, files: skill.files.length };
  });
};

const remove = (store: SkillStore): ActionHandler => async (input, call) => {
  const { name } = input as { name: string };
  checkName(name, 'the name');
  return store.writer.exclusive(async () => {
    // A broken skill (its SKILL.md did not parse) is removed too, kept as a version first: it could only
    // be deleted by hand, and then nothing of it was kept.
    const read = await store.catalog.read();
    const skill = read.skills.get(name);
    const broken = !skill && await store.occupied(name);
    if (!broken) store.checkWritable((await store.find(name)).skill);
    store.checkNotStopped(call);
    const files = skill ? skill.files.map((file) => file.path) : (await store.brokenFiles(name, new Set())).map((file) => file.path);
    const version = await store.versions.keep(name, 'remove', writerOf(call));
    await store.writer.remove(name);
    await store.records.removed(name);
    return { removed: name, files, ...(version ? { version } : {}) };
  });
};

const install = (store: SkillStore): ActionHandler => async (input, call) => {
  const { path, replace = false, dryRun = false } = input as InstallInput & { path: string };
  const { workspaceRoot, skillsDir } = store.parts;
  const source = resolve(workspaceRoot, path);
  if (source === skillsDir || source.startsWith(skillsDir + sep)) throw skillError('PATH_INVALID', 'the source lies inside <workspace>/skills already', { path });
  const isFolder = await lstat(source).then((stats) => stats.isDirectory(), () => false);
  const packaged = isFolder ? await readFolder(source, store.limits) : readArchive(await readArchiveFile(source, store.limits), store.limits, source);
  const { skills, ignored } = groupPackage(packaged, store.limits, source);
  return { ...(await store.put(skills, call, { replace, dryRun, source })), ignored };
};

const installUrl = (store: SkillStore): ActionHandler => async (input, call) => {
  const { url, replace = false, dryRun = false } = input as InstallInput & { url: string };
  const data = await download(url, store.limits.maxArchiveBytes, call.signal);
  const { skills, ignored } = groupPackage(readArchive(data, store.limits, url), store.limits, url);
  return { ...(await store.put(skills, call, { replace, dryRun, source: url })), ignored };
};

/** The skill tool's handlers, named as in manifests/skills.json. */
export function skillHandlers(store: SkillStore): Record<string, ActionHandler> {
  return {
    list: list(store), load: load(store), save: save(store), rename: rename(store), remove: remove(store), install: install(store), install_url: installUrl(store),
    versions: versions(store), restore_version: restoreVersion(store),
  };
}
