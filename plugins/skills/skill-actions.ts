import { lstat, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { ActionCall, ActionHandler, Principal } from '../../core/index.js';
import { fitBudget, skillWarnings, type Catalog, type Skill, type SkillCatalog } from './skill-catalog.js';
import { parseSkillDocument, renamedSkillText, checkName } from './skill-document.js';
import { download } from './skill-download.js';
import { skillError, type SkillLimits } from './skill-limits.js';
import { groupPackage, readArchive, readArchiveFile, readFolder, type PackageFile, type PackagedSkill } from './skill-package.js';
import { checkRelativePath, isScript, isTextBuffer, readInside } from './skill-paths.js';
import { sha256, type SkillRecords } from './skill-records.js';
import type { SkillWriter } from './skill-writer.js';

export interface SkillParts {
  workspaceRoot: string;
  skillsDir: string;
  catalog: SkillCatalog;
  records: SkillRecords;
  writer: SkillWriter;
  limits: SkillLimits;
}

/** Front-matter fields other tools act on; read faithfully, but nothing here grants what they ask for. */
const NOT_APPLIED = ['allowed-tools', 'disallowed-tools', 'model', 'hooks', 'context', 'agent'];

/**
 * Who wrote something, as blocks record it (DESIGN.md §3): `agent:<session>/<turn>/<call>` or
 * `person:<token name>` (the same form as the blocks plugin's provenance).
 */
function writer(call: ActionCall): string {
  const principal: Principal = call.principal;
  switch (principal.kind) {
    case 'agent': return principal.name.startsWith('agent:') ? principal.name : `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}/${call.callId}`;
    case 'person': return `person:${principal.name}`;
    case 'mcp': return `mcp:${principal.name}`;
    case 'kernel': return 'kernel';
  }
}

export function skillHandlers(parts: SkillParts): Record<string, ActionHandler> {
  const { catalog, records, writer: files, limits } = parts;
  const shown = (path: string) => (path.startsWith(parts.workspaceRoot + sep) ? relative(parts.workspaceRoot, path).split(sep).join('/') : path);
  const find = async (name: string): Promise<{ skill: Skill; read: Catalog }> => {
    const read = await catalog.read();
    const skill = read.skills.get(name);
    if (!skill) {
      const broken = read.broken.find((entry) => entry.path.endsWith(`${sep}${name}`));
      throw skillError('SKILL_NOT_FOUND', broken ? `the skill '${name}' is broken: ${broken.message}` : `there is no skill named '${name}'; skill_list shows the skills there are`, { name });
    }
    return { skill, read };
  };
  const writable = (skill: Skill) => {
    if (!skill.writable) throw skillError('READ_ONLY_SKILL', `the skill '${skill.name}' is read from ${skill.folder}, a folder listed in plugins.skills.config.paths; only skills in <workspace>/skills are changed here`, { name: skill.name });
  };

  /** Writes checked skills (unless a dry run) and records who wrote them; the answer lists every file. */
  const put = (skills: PackagedSkill[], call: ActionCall, options: { replace: boolean; dryRun: boolean; source?: string }) => files.exclusive(() => putNow(skills, call, options));
  /** The same, for a caller already inside the writer's turn. */
  const putNow = async (skills: PackagedSkill[], call: ActionCall, options: { replace: boolean; dryRun: boolean; source?: string }) => {
    const existing = (await catalog.read()).skills;
    for (const skill of skills) {
      const present = existing.get(skill.name);
      if (present && !present.writable) writable(present);
      if (present && !options.replace) throw skillError('SKILL_EXISTS', `a skill named '${skill.name}' already exists; install with replace: true to replace it`, { name: skill.name });
    }
    const planned = skills.map((skill) => ({
      name: skill.name, from: skill.from, folder: `skills/${skill.name}`, files: skill.files.map((file) => file.path).sort(),
      bytes: skill.files.reduce((sum, file) => sum + file.data.length, 0), replaces: existing.has(skill.name), warnings: skillWarnings(scriptsIn(skill.files)),
    }));
    if (options.dryRun) return { dryRun: true, wouldWrite: planned };
    const { replaced } = await files.commit(skills);
    const by = writer(call);
    for (const skill of skills) {
      const skillMd = skill.files.find((file) => file.path === 'SKILL.md')!;
      await records.written(skill.name, { updatedBy: by, sha256: sha256(skillMd.data), ...(options.source ? { source: options.source } : {}) });
    }
    return { installed: planned.map((plan) => ({ ...plan, replaced: replaced.includes(plan.name) })), updatedBy: by };
  };

  return {
    list: async () => {
      const read = await catalog.read();
      const skills = [...read.skills.values()];
      const budget = fitBudget(skills, limits.promptTokenBudget);
      return {
        skills: skills.map((skill) => ({
          name: skill.name, description: skill.description, folder: shown(skill.folder), writable: skill.writable,
          tokens: skill.tokens, inPrompt: budget.listed.has(skill.name), files: skill.files.length, scripts: skill.scripts, warnings: skill.warnings,
          ...(skill.updatedBy ? { updatedBy: skill.updatedBy } : {}), lastUsed: skill.lastUsed,
        })),
        promptTokens: budget.tokens,
        promptTokenBudget: limits.promptTokenBudget,
        leftOutOfPrompt: [...budget.left].sort(),
        broken: read.broken.map((entry) => ({ ...entry, path: shown(entry.path) })),
      };
    },

    load: async (input, call) => {
      const { name, file } = input as { name: string; file?: string };
      const { skill } = await find(name);
      // The agent's load times order the prompt's budget (a person reading a skill is not the agent using it);
      // losing one is no reason to fail the read.
      if (call.principal.kind === 'agent') await records.loaded(skill.name).catch(() => undefined);
      if (file !== undefined) {
        const data = await readInside(skill.folder, file, limits.maxFileBytes);
        if (!isTextBuffer(data)) throw skillError('NOT_TEXT', `'${file}' of the skill '${name}' is not text; only text files of a skill are read here`, { file });
        return { name, file: checkRelativePath(file), text: data.toString('utf8') };
      }
      const notApplied = NOT_APPLIED.filter((field) => field in skill.document.frontMatter);
      return {
        name, description: skill.description, body: skill.document.body,
        files: skill.files.map((entry) => entry.path).filter((path) => path !== 'SKILL.md'),
        warnings: [...skill.warnings, ...(notApplied.length > 0 ? [`front matter ${notApplied.join(', ')} is not applied here: what a tool may do is decided by the person's approvals, never by a skill`] : [])],
      };
    },

    save: async (input, call) => {
      const { name, content, files: extra = {} } = input as { name: string; content: string; files?: Record<string, string> };
      checkName(name, 'the name');
      const document = parseSkillDocument(content, { folder: name, maxBodyChars: limits.maxBodyChars, path: 'SKILL.md' });
      const given: PackageFile[] = [{ path: 'SKILL.md', data: Buffer.from(content, 'utf8'), mode: 0o644 }];
      for (const [path, text] of Object.entries(extra)) {
        const checked = checkRelativePath(path, 'the file');
        if (checked === 'SKILL.md') throw skillError('PATH_DUPLICATE', `'${path}' is the SKILL.md itself: give it as content`, { path });
        if (given.some((file) => file.path === checked)) throw skillError('PATH_DUPLICATE', `the file '${checked}' is given twice`, { path: checked });
        given.push({ path: checked, data: Buffer.from(text, 'utf8'), mode: 0o644 });
      }
      // In the writer's turn from the read to the swap, so that two saves of one skill cannot drop each other's files.
      return files.exclusive(async () => {
        // A replaced skill keeps its other files: an edit of SKILL.md does not drop its references.
        const current = (await catalog.read()).skills.get(name);
        const kept = current?.writable ? await keptFiles(current, given, limits) : [];
        const skill = { name, from: 'SKILL.md', document, files: [...given, ...kept] };
        checkSkillSize(skill, limits);
        const answer = await putNow([skill], call, { replace: true, dryRun: false });
        const [written] = (answer as { installed: { files: string[]; replaced: boolean; warnings: string[] }[] }).installed;
        return { name, written: given.map((file) => file.path), kept: kept.map((file) => file.path), replaced: written!.replaced, warnings: written!.warnings, updatedBy: writer(call) };
      });
    },

    rename: async (input, call) => {
      const { name, newName } = input as { name: string; newName: string };
      checkName(newName, 'the new name');
      return files.exclusive(async () => {
        const { skill, read } = await find(name);
        writable(skill);
        if (read.skills.has(newName)) throw skillError('SKILL_EXISTS', `a skill named '${newName}' already exists`, { name: newName });
        const text = await readFile(join(skill.folder, 'SKILL.md'), 'utf8');
        const renamed = renamedSkillText(text, newName);
        const moved = await keptFiles(skill, [], limits, ['SKILL.md']);
        await files.commit([{ name: newName, files: [{ path: 'SKILL.md', data: Buffer.from(renamed, 'utf8'), mode: 0o644 }, ...moved] }]);
        await files.remove(name);
        await records.renamed(name, newName);
        await records.written(newName, { updatedBy: writer(call), sha256: sha256(renamed) });
        return { name: newName, from: name, files: skill.files.length };
      });
    },

    remove: async (input) => {
      const { name } = input as { name: string };
      return files.exclusive(async () => {
        const { skill } = await find(name);
        writable(skill);
        await files.remove(name);
        await records.removed(name);
        return { removed: name, files: skill.files.map((file) => file.path) };
      });
    },

    install: async (input, call) => {
      const { path, replace = false, dryRun = false } = input as { path: string; replace?: boolean; dryRun?: boolean };
      const source = resolve(parts.workspaceRoot, path);
      if (source === parts.skillsDir || source.startsWith(parts.skillsDir + sep)) throw skillError('PATH_INVALID', 'the source lies inside <workspace>/skills already', { path });
      const isFolder = await lstat(source).then((stats) => stats.isDirectory(), () => false);
      const packaged = isFolder ? await readFolder(source, limits) : readArchive(await readArchiveFile(source, limits), limits, source);
      const { skills, ignored } = groupPackage(packaged, limits, source);
      return { ...(await put(skills, call, { replace, dryRun, source })), ignored };
    },

    install_url: async (input, call) => {
      const { url, replace = false, dryRun = false } = input as { url: string; replace?: boolean; dryRun?: boolean };
      const data = await download(url, limits.maxArchiveBytes, call.signal);
      const { skills, ignored } = groupPackage(readArchive(data, limits, url), limits, url);
      return { ...(await put(skills, call, { replace, dryRun, source: url })), ignored };
    },
  };
}

/** The files of a skill on disk that a save keeps (all but those given), read within the limits. */
async function keptFiles(skill: Skill, given: readonly PackageFile[], limits: SkillLimits, also: readonly string[] = []): Promise<PackageFile[]> {
  const replaced = new Set([...given.map((file) => file.path), ...also]);
  const kept: PackageFile[] = [];
  for (const file of skill.files) {
    if (replaced.has(file.path)) continue;
    kept.push({ path: file.path, data: await readInside(skill.folder, file.path, limits.maxSkillBytes), mode: 0o644 });
  }
  return kept;
}

function checkSkillSize(skill: PackagedSkill, limits: SkillLimits): void {
  if (skill.files.length > limits.maxSkillFiles) throw skillError('TOO_MANY_FILES', `the skill '${skill.name}' would hold ${skill.files.length} files, more than the ${limits.maxSkillFiles} allowed`, { limit: limits.maxSkillFiles });
  const bytes = skill.files.reduce((sum, file) => sum + file.data.length, 0);
  if (bytes > limits.maxSkillBytes) throw skillError('SKILL_TOO_LARGE', `the skill '${skill.name}' would hold ${bytes} bytes, more than the ${limits.maxSkillBytes} allowed`, { bytes, limit: limits.maxSkillBytes });
}

/** Scripts in a package in memory: by name, executable bits, or a `#!` first line. */
function scriptsIn(files: readonly PackageFile[]): string[] {
  return files.filter((file) => isScript(file.path, file.mode, file.data)).map((file) => file.path);
}
