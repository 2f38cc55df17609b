import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { settledMtime, skillLineTokens, type Logger, type SkillListing } from '../../core/index.js';
import { parseSkillDocument, type SkillDocument } from './skill-document.js';
import { problemOf, skillError, type SkillLimits, type SkillProblem } from './skill-limits.js';
import { byCodePoint, looksLikeScript, readInside, scanFolder, type FolderFile, type FolderScan } from './skill-paths.js';
import { sha256, type SkillRecords } from './skill-records.js';

/** A folder skills are read from: the workspace's own (written by the kernel) or one from the config (read only). */
export interface SkillRoot {
  path: string;
  writable: boolean;
}

export interface Skill {
  name: string;
  description: string;
  folder: string;
  writable: boolean;
  document: SkillDocument;
  /** Every file of the folder, SKILL.md included, relative. */
  files: FolderFile[];
  scripts: string[];
  warnings: string[];
  /** Tokens its line takes in the system prompt (cl100k_base, as compaction counts). */
  tokens: number;
  updatedBy?: string;
  /** When it was last loaded, else last written by the kernel, else SKILL.md's time on disk: the order the budget drops by. */
  lastUsed: string;
}

export interface BrokenSkill {
  path: string;
  problem: SkillProblem;
  message: string;
}

export interface Catalog {
  skills: Map<string, Skill>;
  broken: BrokenSkill[];
}

interface Parsed { key: string | undefined; document: SkillDocument; sha256: string; tokens: number }
/** `stamp` is undefined when the scan may not be reused: a folder changed too close to it (settledMtime). */
interface Scanned { stamp: string | undefined; scan: FolderScan; scripts: string[] }

/**
 * Reads every skill of every root on each call (the folders are small and bounded), reparsing only a
 * SKILL.md whose size or time changed, or whose time was too close to its last read to be trusted
 * (settledMtime: a change in the same tick of the file system's clock keeps both): a skill added or
 * edited on disk is seen at the next listing or turn, with no watcher to keep alive. Broken skills are
 * reported, each once in the log.
 */
export class SkillCatalog {
  private readonly parsed = new Map<string, Parsed>();
  private readonly scans = new Map<string, Scanned>();
  private readonly logged = new Set<string>();

  /** `reuseScans: false` walks every folder on every read (kept for the benchmark's comparison). */
  constructor(private readonly roots: readonly SkillRoot[], private readonly limits: SkillLimits, private readonly records: SkillRecords, private readonly log: Logger,
    private readonly options: { reuseScans?: boolean } = {}) {}

  async read(): Promise<Catalog> {
    const catalog: Catalog = { skills: new Map(), broken: [] };
    for (const root of this.roots) await this.readRoot(root, catalog);
    for (const broken of catalog.broken) {
      const key = `${broken.path}\u0000${broken.message}`;
      if (!this.logged.has(key)) this.log.warn(`skill not loaded: ${broken.message}`, { path: broken.path, problem: broken.problem });
      this.logged.add(key);
    }
    return catalog;
  }

  /** The skills the prompt lists: the most recently used first until the budget is spent, then by name. */
  async promptListing(): Promise<SkillListing[]> {
    const { skills } = await this.read();
    const listed = fitBudget([...skills.values()], this.limits.promptTokenBudget).listed;
    return [...skills.values()].filter((skill) => listed.has(skill.name)).map((skill) => ({ name: skill.name, description: skill.description }));
  }

  private async readRoot(root: SkillRoot, catalog: Catalog): Promise<void> {
    let entries;
    try {
      entries = await readdir(root.path, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && root.writable) return;
      catalog.broken.push({ path: root.path, problem: 'UNREADABLE', message: `the skills folder ${root.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
      return;
    }
    const folders = entries.filter((entry) => !entry.name.startsWith('.') && (entry.isDirectory() || entry.isSymbolicLink())).sort((a, b) => byCodePoint(a.name, b.name));
    // Read side by side (each is a few stats), then taken in name order, so which duplicate wins never depends on timing.
    const read = await Promise.all(folders.map((entry) => {
      const folder = join(root.path, entry.name);
      if (entry.isSymbolicLink()) return { folder, error: skillError('LINK', `${folder} is a symbolic link; a skill's folder is never followed through a link (list another folder in plugins.skills.config.paths instead)`, { path: folder }) };
      return this.readSkill(folder, entry.name, root.writable).then((skill) => ({ folder, skill }), (error: unknown) => ({ folder, error }));
    }));
    for (const entry of read) {
      const { folder } = entry;
      try {
        if ('error' in entry) throw entry.error;
        const { skill } = entry;
        const earlier = catalog.skills.get(skill.name);
        if (earlier) throw skillError('NAME_DUPLICATE', `${folder}: a skill named '${skill.name}' is already read from ${earlier.folder}; the first one is used`, { path: folder });
        catalog.skills.set(skill.name, skill);
      } catch (error) {
        const problem = problemOf(error);
        catalog.broken.push({ path: folder, problem: problem ?? 'UNREADABLE', message: problem ? (error as Error).message : `${folder} cannot be read: ${String(error)}` });
      }
    }
  }

  private async readSkill(folder: string, folderName: string, writable: boolean): Promise<Skill> {
    const file = join(folder, 'SKILL.md');
    const readAt = Date.now();
    const stats = await lstat(file).catch(() => undefined);
    if (!stats) throw skillError('NO_SKILL', `${folder} has no SKILL.md`, { path: folder });
    if (stats.isSymbolicLink()) throw skillError('LINK', `${file} is a symbolic link; links in a skill are never followed`, { path: file });
    const key = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    let parsed = this.parsed.get(folder);
    if (parsed?.key !== key) {
      // The body limit is in characters; four bytes a character is the most UTF-8 takes, plus room for the front matter.
      const text = await readInside(folder, 'SKILL.md', this.limits.maxBodyChars * 4 + 64 * 1024).catch((error: unknown) => {
        if (problemOf(error) === 'FILE_TOO_LARGE') throw skillError('BODY_TOO_LARGE', `${file} is ${stats.size} bytes: its instructions are over the ${this.limits.maxBodyChars} characters allowed`, { path: file });
        throw error;
      });
      const document = parseSkillDocument(text.toString('utf8'), { folder: folderName, maxBodyChars: this.limits.maxBodyChars, path: file });
      // A file changed within its clock's tick of this read may change again unseen (same time, same size): read again next time.
      parsed = { key: settledMtime(stats.mtimeMs, readAt) ? key : undefined, document, sha256: sha256(text), tokens: skillLineTokens({ name: document.name, description: document.description }) };
      this.parsed.set(folder, parsed);
    }
    const { scan, scripts } = await this.scan(folder);
    if (scan.files.length > this.limits.maxSkillFiles) throw skillError('TOO_MANY_FILES', `${folder} holds more than ${this.limits.maxSkillFiles} files`, { path: folder, limit: this.limits.maxSkillFiles });
    if (scan.bytes > this.limits.maxSkillBytes) throw skillError('SKILL_TOO_LARGE', `${folder} holds ${scan.bytes} bytes, more than the ${this.limits.maxSkillBytes} a skill may have`, { path: folder, bytes: scan.bytes, limit: this.limits.maxSkillBytes });
    const { name, description } = parsed.document;
    const record = this.records.get(name);
    const updatedBy = this.records.provenance(name, parsed.sha256);
    return {
      name, description, folder, writable, document: parsed.document, files: scan.files, scripts, warnings: skillWarnings(scripts, scan.links, scan.others),
      tokens: parsed.tokens,
      ...(updatedBy ? { updatedBy } : {}),
      lastUsed: record?.lastLoadedAt ?? record?.updatedAt ?? stats.mtime.toISOString(),
    };
  }

  /**
   * A skill folder's files and scripts, walked again only when one of its folders changed time (a file
   * added, removed or renamed anywhere in it) or was changed too close to the last walk to be trusted;
   * otherwise one stat per folder. A file rewritten in place
   * keeps its folder's time: SKILL.md is checked on its own, and a file loaded is checked when read.
   */
  private async scan(folder: string): Promise<Scanned> {
    const known = this.options.reuseScans === false ? undefined : this.scans.get(folder);
    if (known?.stamp !== undefined) {
      const now = await folderStamp(folder, known.scan.folders).catch(() => undefined);
      if (now?.stamp === known.stamp) return known;
    }
    const started = Date.now();
    const scan = await scanFolder(folder, this.limits.maxSkillFiles);
    const { stamp, newestMs } = await folderStamp(folder, scan.folders);
    // A folder changed within its clock's tick of this scan may change again keeping its time (a file
    // added in the same few milliseconds): such a scan is not reused.
    const scanned = { stamp: settledMtime(newestMs, started) ? stamp : undefined, scan, scripts: await findScripts(folder, scan.files) };
    this.scans.set(folder, scanned);
    return scanned;
  }
}

async function folderStamp(folder: string, folders: readonly string[]): Promise<{ stamp: string; newestMs: number }> {
  const stats = await Promise.all(folders.map((relative) => lstat(relative === '' ? folder : join(folder, ...relative.split('/')))));
  return { stamp: stats.map((each) => `${each.ino}:${each.mtimeMs}`).join('|'), newestMs: Math.max(0, ...stats.map((each) => each.mtimeMs)) };
}

async function findScripts(folder: string, files: FolderFile[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) if (await looksLikeScript(folder, file)) found.push(file.path);
  return found;
}

/** The warnings a skill is listed with: scripts that will never run here, links never followed. */
export function skillWarnings(scripts: readonly string[], links: readonly string[] = [], others: readonly string[] = []): string[] {
  const warnings: string[] = [];
  const some = (items: readonly string[]) => `${items.slice(0, 5).join(', ')}${items.length > 5 ? ` and ${items.length - 5} more` : ''}`;
  if (scripts.length > 0) warnings.push(`ships scripts (${some(scripts)}): they are inert here; Quire never runs a skill's scripts, only reads its text`);
  if (links.length > 0) warnings.push(`holds symbolic links (${some(links)}), never followed`);
  if (others.length > 0) warnings.push(`holds entries that are not files (${some(others)}), never read`);
  return warnings;
}

/**
 * Which skills the prompt's budget holds: by last use, most recent first, each that still fits; one
 * that would pass the budget is left out and the next is tried. Stopping at the first that did not
 * fit let one skill with a huge description (the newest, so tried first) leave out every skill.
 */
export function fitBudget(skills: readonly Pick<Skill, 'name' | 'tokens' | 'lastUsed'>[], budget: number): { listed: Set<string>; left: Set<string>; tokens: number } {
  const byUse = [...skills].sort((a, b) => byCodePoint(b.lastUsed, a.lastUsed) || byCodePoint(a.name, b.name));
  const listed = new Set<string>();
  const left = new Set<string>();
  let tokens = 0;
  for (const skill of byUse) {
    if (tokens + skill.tokens <= budget) {
      listed.add(skill.name);
      tokens += skill.tokens;
    } else left.add(skill.name);
  }
  return { listed, left, tokens };
}
