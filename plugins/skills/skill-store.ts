import { lstat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { throwIfStopped, type ActionCall, type Principal } from '../../core/index.js';
import { skillWarnings, type Catalog, type Skill, type SkillCatalog } from './skill-catalog.js';
import { skillError, type SkillLimits } from './skill-limits.js';
import type { PackageFile, PackagedSkill } from './skill-package.js';
import { isScript, readInside, readSkillFolder } from './skill-paths.js';
import { sha256, type SkillRecords } from './skill-records.js';
import type { SkillVersionOp, SkillVersions } from './skill-versions.js';
import type { SkillWriter } from './skill-writer.js';

export interface SkillStoreParts {
  workspaceRoot: string;
  skillsDir: string;
  catalog: SkillCatalog;
  records: SkillRecords;
  writer: SkillWriter;
  versions: SkillVersions;
  limits: SkillLimits;
}

export interface PutOptions {
  replace: boolean;
  dryRun: boolean;
  /** Where an install came from (a path or URL), kept in the record. */
  source?: string;
  /** What a replaced skill's kept version says replaced it (default: `install` with a source, else `save`). */
  op?: SkillVersionOp;
}

/** One skill as an install or save reports it: what it wrote (or would write) and where. */
export interface PlannedSkill {
  name: string;
  from: string;
  folder: string;
  files: string[];
  bytes: number;
  replaces: boolean;
  warnings: string[];
}

export type PutAnswer = { dryRun: true; wouldWrite: PlannedSkill[] } | { installed: (PlannedSkill & { replaced: boolean })[]; updatedBy: string };

/**
 * Who wrote something, in the form blocks record it (DESIGN.md §3): `agent:<session>/<turn>/<call>`
 * or `person:<token name>`.
 */
export function writerOf(call: ActionCall): string {
  const principal: Principal = call.principal;
  switch (principal.kind) {
    case 'agent': return principal.name.startsWith('agent:') ? principal.name : `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}/${call.callId}`;
    case 'person': return `person:${principal.name}`;
    case 'mcp': return `mcp:${principal.name}`;
    case 'kernel': return 'kernel';
  }
}

/** The skills plugin's parts together: lookups that say precisely why they fail, and checked writes. */
export class SkillStore {
  readonly catalog: SkillCatalog;
  readonly records: SkillRecords;
  readonly writer: SkillWriter;
  readonly versions: SkillVersions;
  readonly limits: SkillLimits;

  constructor(readonly parts: SkillStoreParts) {
    ({ catalog: this.catalog, records: this.records, writer: this.writer, versions: this.versions, limits: this.limits } = parts);
  }

  /** A path as people read it: relative to the workspace when inside it. */
  shown(path: string): string {
    const root = this.parts.workspaceRoot;
    return path.startsWith(root + sep) ? relative(root, path).split(sep).join('/') : path;
  }

  async find(name: string): Promise<{ skill: Skill; read: Catalog }> {
    const read = await this.catalog.read();
    const skill = read.skills.get(name);
    if (!skill) {
      const broken = read.broken.find((entry) => entry.path.endsWith(`${sep}${name}`));
      throw skillError('SKILL_NOT_FOUND', broken ? `the skill '${name}' is broken: ${broken.message}` : `there is no skill named '${name}'; skill_list shows the skills there are`, { name });
    }
    return { skill, read };
  }

  /** Whether anything is at skills/<name>: a valid skill, or a broken one the catalog leaves out. */
  occupied(name: string): Promise<boolean> {
    return lstat(join(this.parts.skillsDir, name)).then(() => true, () => false);
  }

  /**
   * A write's safe point, in the writer's turn before anything changes: a call stopped while it waited
   * (cancelled, or past its time limit) writes nothing. It was told ACTION_CANCELLED and wrote anyway.
   */
  checkNotStopped(call: ActionCall): void {
    throwIfStopped(call, 'The skill write (nothing was written)');
  }

  checkWritable(skill: Skill): void {
    if (!skill.writable) throw skillError('READ_ONLY_SKILL', `the skill '${skill.name}' is read from ${skill.folder}, a folder listed in plugins.skills.config.paths; only skills in <workspace>/skills are changed here`, { name: skill.name });
  }

  /** Writes checked skills (unless a dry run) and records who wrote them; the answer lists every file. */
  put(skills: readonly PackagedSkill[], call: ActionCall, options: PutOptions): Promise<PutAnswer> {
    return this.writer.exclusive(() => this.putNow(skills, call, options));
  }

  /** The same, for a caller already inside the writer's turn. */
  async putNow(skills: readonly PackagedSkill[], call: ActionCall, options: PutOptions): Promise<PutAnswer> {
    const existing = (await this.catalog.read()).skills;
    // What is at skills/<name> decides, not the catalog alone: it leaves a broken skill out, which was then
    // replaced without asking and without a version (its other files lost).
    const occupied = new Set<string>();
    for (const skill of skills) {
      const present = existing.get(skill.name);
      if (present) this.checkWritable(present);
      if (present || await this.occupied(skill.name)) occupied.add(skill.name);
      if (occupied.has(skill.name) && !options.replace) throw skillError('SKILL_EXISTS', `a skill named '${skill.name}' already exists${present ? '' : ' (it is broken: skill_list says why)'}; install with replace: true to replace it`, { name: skill.name });
    }
    const planned = skills.map((skill): PlannedSkill => ({
      name: skill.name, from: skill.from, folder: `skills/${skill.name}`, files: skill.files.map((file) => file.path).sort(),
      bytes: skill.files.reduce((sum, file) => sum + file.data.length, 0), replaces: occupied.has(skill.name), warnings: skillWarnings(scriptsIn(skill.files)),
    }));
    if (options.dryRun) return { dryRun: true, wouldWrite: planned };
    this.checkNotStopped(call);
    const by = writerOf(call);
    // The skills about to be replaced are kept as versions first, durably: a version that cannot be kept stops the write.
    for (const skill of skills) if (occupied.has(skill.name)) await this.versions.keep(skill.name, options.op ?? (options.source ? 'install' : 'save'), by);
    const { replaced } = await this.writer.commit(skills);
    for (const skill of skills) {
      const skillMd = skill.files.find((file) => file.path === 'SKILL.md')!;
      await this.records.written(skill.name, { updatedBy: by, sha256: sha256(skillMd.data), ...(options.source ? { source: options.source } : {}) });
    }
    return { installed: planned.map((plan) => ({ ...plan, replaced: replaced.includes(plan.name) })), updatedBy: by };
  }

  /** The files of a skill on disk that a save or rename carries over (all but those named), read within the limits. */
  async keptFiles(skill: Skill, replaced: ReadonlySet<string>): Promise<PackageFile[]> {
    const kept: PackageFile[] = [];
    for (const file of skill.files) {
      if (!replaced.has(file.path)) kept.push({ path: file.path, data: await readInside(skill.folder, file.path, this.limits.maxSkillBytes), mode: 0o644 });
    }
    return kept;
  }

  /**
   * The files of a broken skill's folder (one the catalog could not read as a skill), but `replaced`:
   * none when there is no folder; past the limits, refused before anything changes.
   */
  async brokenFiles(name: string, replaced: ReadonlySet<string>): Promise<PackageFile[]> {
    const read = await readSkillFolder(join(this.parts.skillsDir, name), this.limits, () =>
      skillError('SKILL_TOO_LARGE', `the broken skill '${name}' is past the skill limits, so its files cannot be kept; nothing was changed`, { name }));
    return (read ?? []).filter((file) => !replaced.has(file.path)).map((file) => ({ ...file, mode: 0o644 }));
  }

  checkSize(skill: PackagedSkill): void {
    const { maxSkillFiles, maxSkillBytes } = this.limits;
    if (skill.files.length > maxSkillFiles) throw skillError('TOO_MANY_FILES', `the skill '${skill.name}' would hold ${skill.files.length} files, more than the ${maxSkillFiles} allowed`, { limit: maxSkillFiles });
    const bytes = skill.files.reduce((sum, file) => sum + file.data.length, 0);
    if (bytes > maxSkillBytes) throw skillError('SKILL_TOO_LARGE', `the skill '${skill.name}' would hold ${bytes} bytes, more than the ${maxSkillBytes} allowed`, { bytes, limit: maxSkillBytes });
  }
}

/** Scripts in a package in memory: by name, executable bits, or a `#!` first line. */
function scriptsIn(files: readonly PackageFile[]): string[] {
  return files.filter((file) => isScript(file.path, file.mode, file.data)).map((file) => file.path);
}
