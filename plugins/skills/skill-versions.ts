import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../core/index.js';
import { nameFlaw, parseSkillDocument } from './skill-document.js';
import { problemOf, skillError, type SkillLimits } from './skill-limits.js';
import { checkFileSet, checkRelativePath, readSkillFolder } from './skill-paths.js';

/** What replaced or removed a skill's files: the skill tool's writes, a restore of a version, a snapshot rollback. */
export type SkillVersionOp = 'save' | 'install' | 'rename' | 'remove' | 'restore' | 'rollback';

/** One file of a kept skill: text as it is, anything else (an image an install brought) as base64. */
export interface SkillVersionFile { path: string; encoding: 'utf8' | 'base64'; data: string }

export interface SkillVersion {
  /** `<time>-<op>`: sortable by time. */
  version: string;
  name: string;
  op: SkillVersionOp;
  by: string;
  time: string;
  /** Every file of the skill's folder before the change, SKILL.md first. */
  files: SkillVersionFile[];
}

export type SkillVersionInfo = Omit<SkillVersion, 'files'> & { description: string; files: string[]; bytes: number };

export interface SkillRetention {
  /** Versions kept per skill at most (the newest). */
  maxVersions: number;
  /** Versions older than this are dropped. */
  maxAgeDays: number;
}

const VERSION = /^\d{8}T\d{9}Z-(save|install|rename|remove|restore|rollback)(-\d+)?$/;

/**
 * Earlier versions of the workspace's skills, under `<workspace>/history/skills/<name>/<time>-<op>.json`
 * (beside the documents' versions, whose folders are document ids, so the two never meet): before a
 * skill's folder is replaced or removed, all its files are kept in one file, written atomically and
 * durably before the change (a version that cannot be kept stops the change), and pruned by the
 * retention rules. The skill tool lists and restores them.
 */
export class SkillVersions {
  constructor(readonly folder: string, private readonly skillsDir: string, private readonly limits: SkillLimits, private readonly retention: SkillRetention) {}

  private skillFolder(name: string): string {
    if (nameFlaw(name)) throw skillError('NAME_INVALID', `'${name.slice(0, 80)}' is not a skill name`, { name: name.slice(0, 200) });
    return join(this.folder, name);
  }

  /**
   * Keeps the skill's files as they are on disk now; returns the version, or undefined when there is no
   * such skill folder (nothing to keep). Bounded by the skill limits: a folder past them is refused.
   */
  async keep(name: string, op: SkillVersionOp, by: string, now: Date = new Date()): Promise<string | undefined> {
    if (nameFlaw(name)) return undefined;
    const read = await readSkillFolder(join(this.skillsDir, name), this.limits, () =>
      skillError('SKILL_TOO_LARGE', `the skill '${name}' is past the skill limits (${this.limits.maxSkillFiles} files, ${this.limits.maxSkillBytes} bytes), so its version cannot be kept; nothing was changed`, { name }));
    if (!read) return undefined;
    const files: SkillVersionFile[] = [];
    for (const { path, data } of read.sort((a, b) => Number(b.path === 'SKILL.md') - Number(a.path === 'SKILL.md'))) {
      const text = data.toString('utf8');
      files.push(Buffer.from(text, 'utf8').equals(data) && !data.includes(0) ? { path, encoding: 'utf8', data: text } : { path, encoding: 'base64', data: data.toString('base64') });
    }
    const folder = this.skillFolder(name);
    const time = now.toISOString().replace(/[-:.]/g, '');
    const existing = new Set(await readdir(folder).catch(() => [] as string[]));
    let version = `${time}-${op}`;
    for (let n = 2; existing.has(`${version}.json`); n++) version = `${time}-${op}-${n}`;
    await writeJsonAtomic(join(folder, `${version}.json`), { version, name, op, by, time: now.toISOString(), files } satisfies SkillVersion);
    await this.prune(name, now);
    return version;
  }

  /** Versions of a skill, newest first. */
  async list(name: string): Promise<SkillVersionInfo[]> {
    const out: SkillVersionInfo[] = [];
    for (const version of await this.names(name)) {
      // A damaged version file must not hide the others (restoring it says what is wrong with it).
      const found = await this.read(name, version).catch((error: unknown) => {
        if (problemOf(error) === 'VERSION_INVALID' || problemOf(error)?.startsWith('PATH_')) return undefined;
        throw error;
      });
      if (!found) continue;
      const { files, ...info } = found;
      const skillMd = files.find((file) => file.path === 'SKILL.md');
      out.push({ ...info, description: descriptionOf(skillMd), files: files.map((file) => file.path), bytes: files.reduce((sum, file) => sum + bytesOf(file).length, 0) });
    }
    return out;
  }

  async read(name: string, version: string): Promise<SkillVersion> {
    if (!VERSION.test(version)) throw skillError('PATH_INVALID', `'${version.slice(0, 60)}' is not a skill version (skill_versions lists them)`, { version: version.slice(0, 60) });
    const text = await readFile(join(this.skillFolder(name), `${version}.json`), 'utf8').catch(() => undefined);
    if (text === undefined) throw skillError('SKILL_NOT_FOUND', `the skill '${name}' has no version '${version}'; skill_versions lists them`, { name, version });
    return checkedVersion(text, `version '${version}' of '${name}'`, { version });
  }

  /** Skills with versions kept (removed ones among them), by name. */
  async skills(): Promise<{ name: string; versions: number; latest: string }[]> {
    const out = [];
    for (const name of (await readdir(this.folder).catch(() => [] as string[])).filter((entry) => !nameFlaw(entry)).sort()) {
      const versions = await this.names(name);
      if (versions.length > 0) out.push({ name, versions: versions.length, latest: versions[0]! });
    }
    return out;
  }

  private async names(name: string): Promise<string[]> {
    return (await readdir(this.skillFolder(name)).catch(() => [] as string[])).map((entry) => entry.replace(/\.json$/, '')).filter((entry) => VERSION.test(entry)).sort().reverse();
  }

  /**
   * The retention rules for every skill's versions, a removed skill's too (they were applied only when
   * that skill got a new version); `stopped` is asked between skills. An emptied folder goes.
   */
  async pruneAll(now: Date, stopped: () => boolean = () => false): Promise<void> {
    for (const name of (await readdir(this.folder).catch(() => [] as string[])).filter((entry) => !nameFlaw(entry))) {
      if (stopped()) return;
      await this.prune(name, now);
      await rmdir(this.skillFolder(name)).catch(() => undefined);
    }
  }

  private async prune(name: string, now: Date): Promise<void> {
    const oldest = now.getTime() - this.retention.maxAgeDays * 86_400_000;
    for (const [i, version] of (await this.names(name)).entries()) {
      const s = version.slice(0, 18);
      const time = Date.parse(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}.${s.slice(15, 18)}Z`);
      if (i >= this.retention.maxVersions || time < oldest) await rm(join(this.skillFolder(name), `${version}.json`), { force: true });
    }
  }
}

export function bytesOf(file: SkillVersionFile): Buffer {
  return Buffer.from(file.data, file.encoding);
}

function descriptionOf(skillMd: SkillVersionFile | undefined): string {
  if (!skillMd || skillMd.encoding !== 'utf8') return '';
  try {
    return parseSkillDocument(skillMd.data, { maxBodyChars: Number.MAX_SAFE_INTEGER, path: 'SKILL.md' }).description;
  } catch {
    return '';
  }
}

/**
 * A kept version as read from its file, checked like a package before anything uses it: the file may
 * have been edited or damaged (a shared or restored workspace), and its paths are written on restore.
 */
const OPS: ReadonlySet<unknown> = new Set<SkillVersionOp>(['save', 'install', 'rename', 'remove', 'restore', 'rollback']);

function checkedVersion(text: string, what: string, expected: { version: string }): SkillVersion {
  const invalid = (why: string): never => { throw skillError('VERSION_INVALID', `${what} cannot be used: ${why}`, { field: 'version' }); };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('its file is not JSON');
  }
  const version = value as Partial<SkillVersion> | null;
  if (typeof version !== 'object' || version === null || !Array.isArray(version.files)) return invalid('it lists no files');
  // What a listing shows of it, as its file name says: one without them failed the whole listing (500).
  if (version.version !== expected.version) return invalid('its version is not the one its file is named by');
  if (typeof version.name !== 'string' || version.name === '') return invalid('it names no skill');
  if (!OPS.has(version.op) || typeof version.by !== 'string' || typeof version.time !== 'string') return invalid('it says no change, author or time');
  const files: SkillVersionFile[] = [];
  for (const file of version.files as unknown[]) {
    const entry = file as Partial<SkillVersionFile> | null;
    if (typeof entry !== 'object' || entry === null || typeof entry.path !== 'string' || typeof entry.data !== 'string' || (entry.encoding !== 'utf8' && entry.encoding !== 'base64')) {
      return invalid('a file in it has no path, data or known encoding');
    }
    // Its paths are checked as an archive's are: one climbing out of the skill's folder is refused.
    files.push({ path: checkRelativePath(entry.path, `the file in ${what}`), encoding: entry.encoding, data: entry.data });
  }
  checkFileSet(files.map((file) => file.path), what);
  return { ...(version as SkillVersion), files };
}
