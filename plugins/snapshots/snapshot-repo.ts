import { existsSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { KernelError, NotFoundError, isValidId, newId, settledMtime, writeFileAtomic, type IntentJournal } from '../../core/index.js';
import { applyJournaled, type ChangeRoots, type FileChange } from './file-change.js';
import { ObjectStore, sha256 } from './object-store.js';
import { SnapshotIndex, summaryOf, type SnapshotSummary } from './snapshot-index.js';
import type { FileDiff, FileEntry, RollbackDiff, Snapshot, Tables, TurnNotes, WorkHooks } from './snapshot-types.js';

export type { FileDiff, FileEntry, RollbackDiff, Snapshot, Tables, TurnNotes, WorkHooks } from './snapshot-types.js';
export type { SnapshotSummary } from './snapshot-index.js';

/** Changed files read (and stored) between two turns of the event loop, two stop checks and two progress reports. */
const YIELD_EVERY = 32;

/** Dot-files of the kernel's own writes in progress are never part of a snapshot. */
function isTemporary(path: string): boolean {
  if (!path.startsWith('.') && !path.includes('/.')) return false;
  return path.split('/').some((part) => part.startsWith('.') && part !== '.notebook.json');
}

/**
 * In skills/, everything is a skill's (dot-files included) but entries at its top that start with a
 * dot (no skill's; the catalog skips them too) and the temporary files of an atomic write in progress.
 */
function isSkillsTemporary(path: string): boolean {
  return path.startsWith('.') || /(^|\/)\.[^/]+\.[0-9a-f]{12}\.tmp$/.test(path);
}

/** A folder a snapshot holds, the key of its table in the record, and what in it is never part of one. */
interface Tree { key: keyof Tables; dir: string; skip(path: string): boolean }

/** A snapshot's file tables and when its scan began: what the next scan starts from. */
export type ScanBase = Pick<Snapshot, 'files' | 'skills' | 'created' | 'scanStarted'>;

/**
 * The workspace repository (`<workspace>/repo/`): content-addressed objects, one JSON record per
 * snapshot (the truth), and an index of the records (`index.jsonl`, see SnapshotIndex) so that taking
 * a snapshot costs the same with 2 snapshots in the repository as with 500. Callers hold the notes'
 * writes while creating or rolling back.
 */
export class SnapshotRepo {
  readonly objects: ObjectStore;
  /** `repo/snapshots/`: one record per snapshot. */
  readonly records: string;
  private readonly index: SnapshotIndex;
  private readonly trees: readonly Tree[];
  /** `<workspace>/skills/`: the workspace's skills, snapshotted with the notes. */
  readonly skillsDir: string;
  /**
   * The newest snapshot's record as last read or written by this process: its file table is what the
   * next snapshot compares data/ with. Records never change their files, so it is kept as long as the
   * index names the same snapshot as the newest.
   */
  private newest: Snapshot | undefined;
  /** The tag change in progress (see `setTags`). */
  private tagging: Promise<unknown> = Promise.resolve();

  constructor(
    readonly repoDir: string,
    readonly dataDir: string,
    readonly journal: IntentJournal<FileChange>,
    private readonly auditHead?: () => { seq: number; hash: string },
    options: { skillsDir?: string } = {},
  ) {
    // The workspace's layout (DESIGN.md §2): skills/ beside data/.
    this.skillsDir = options.skillsDir ?? join(dirname(dataDir), 'skills');
    this.trees = [{ key: 'files', dir: dataDir, skip: isTemporary }, { key: 'skills', dir: this.skillsDir, skip: isSkillsTemporary }];
    this.objects = new ObjectStore(join(repoDir, 'objects'));
    this.records = join(repoDir, 'snapshots');
    this.index = new SnapshotIndex(join(repoDir, 'index.jsonl'), this.records);
  }

  /** Where a snapshot's record is; an id of the wrong shape is refused (it names no file of the repository). */
  recordPath(id: string): string {
    if (!isValidId(id)) throw new KernelError('INVALID_INPUT', `'${String(id).slice(0, 40)}' is not a snapshot id`, { details: { field: 'id' } });
    return join(this.records, `${id}.json`);
  }

  /** Every snapshot without its file table, oldest first. */
  async list(): Promise<SnapshotSummary[]> {
    return [...await this.index.summaries()];
  }

  async get(id: string): Promise<Snapshot> {
    const path = this.recordPath(id);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) throw new NotFoundError('NOT_FOUND', `No snapshot with id '${id}'`, { details: { id } });
    try {
      return JSON.parse(text) as Snapshot;
    } catch {
      throw new KernelError('WORKSPACE_INVALID', `The record of snapshot '${id}' does not parse (${path}); 'quire snapshot verify' lists every damaged record`, { details: { id } });
    }
  }

  /** The newest snapshot, whose file table lets the next one skip unchanged files. */
  async latest(): Promise<Snapshot | undefined> {
    return this.recordOf((await this.index.summaries()).at(-1));
  }

  /** The record of the newest snapshot, from memory when this process read or wrote it last. */
  private async recordOf(head: SnapshotSummary | undefined): Promise<Snapshot | undefined> {
    if (!head) return undefined;
    if (this.newest?.id !== head.id) this.newest = await this.get(head.id);
    // Tags are the one thing a record changes; the index has them as they are now.
    return { ...this.newest, tags: head.tags };
  }

  /**
   * data/ and skills/ as they are now, with the newest snapshot as the scan's base when its record reads
   * (it only saves hashing unchanged files: a damaged newest record must not stop a diff or a rollback).
   */
  async scanNow(hooks: WorkHooks = {}): Promise<Tables> {
    return this.scanTables(await this.latest().catch(() => undefined), false, hooks);
  }

  /** Files of data/ as they are now (see `scanTables`). */
  async scan(base?: ScanBase, store = false, hooks: WorkHooks = {}): Promise<Record<string, FileEntry>> {
    return (await this.scanTables(base, store, hooks)).files;
  }

  /**
   * Files of data/ and skills/ as they are now: size and mtime from the disk, and hashes only where
   * `base` (the newest snapshot) can vouch for a file: same size, same mtime, and an mtime settled
   * before that snapshot's scan began (a base without a skills table vouches for no skill file). Stats
   * are synchronous (a few microseconds each; writes are paused meanwhile); changed files are read,
   * hashed and (with `store`) written as objects several at a time, made durable together before this
   * returns.
   */
  async scanTables(base?: ScanBase, store = false, hooks: WorkHooks = {}): Promise<Tables> {
    const trustedBefore = base ? base.scanStarted ?? Date.parse(base.created) : 0;
    const out: Tables = { files: {}, skills: {} };
    const changed: { tree: Tree; path: string; size: number; mtimeMs: number }[] = [];
    for (const tree of this.trees) {
      const known = base?.[tree.key] ?? {};
      const table = out[tree.key];
      const entries = await listTree(tree.dir);
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const path = relativePath(tree.dir, entry.parentPath, entry.name);
        if (tree.skip(path)) continue;
        const info = statSync(`${entry.parentPath}${sep}${entry.name}`, { throwIfNoEntry: false });
        // Removed since the folder was listed (by something other than the kernel, whose writes are held).
        if (!info) continue;
        const before = known[path];
        if (before && before.size === info.size && before.mtimeMs === info.mtimeMs && settledMtime(info.mtimeMs, trustedBefore)) table[path] = before;
        else changed.push({ tree, path, size: info.size, mtimeMs: info.mtimeMs });
      }
    }
    const batch = store ? await this.objects.batch(changed.length) : undefined;
    try {
      for (let at = 0; at < changed.length; at++) {
        if (at % YIELD_EVERY === 0) {
          hooks.stopCheck?.();
          hooks.onProgress?.(at, changed.length, 'changed files read');
          // Reads, hashes and compression are synchronous (a file system round trip each costs more than the
          // work); the event loop gets a turn between groups.
          if (at > 0) await new Promise((resolve) => setImmediate(resolve));
        }
        const file = changed[at]!;
        // Removed since it was listed: by something other than the kernel when writes are held, or by a
        // write of the kernel's during a diff against now (which holds none).
        const content = readOrAbsent(join(file.tree.dir, file.path));
        if (!content) continue;
        out[file.tree.key][file.path] = { hash: batch ? await batch.add(content) : sha256(content), size: file.size, mtimeMs: file.mtimeMs };
      }
      hooks.stopCheck?.();
      await batch?.commit();
    } finally {
      await batch?.discard();
    }
    return out;
  }

  /** A new snapshot: only files whose size or mtime changed since the last one are read and hashed. */
  async create(memo: string, origin: string, hooks: WorkHooks = {}, extra: TurnNotes = {}): Promise<Snapshot> {
    const head = (await this.index.summaries()).at(-1);
    // A newest record that cannot be read vouches for nothing: every file is then read and hashed again.
    const base = await this.recordOf(head).catch(() => undefined);
    const scanStarted = Date.now();
    // A stop before the record is written leaves no snapshot (objects stored meanwhile are only unreferenced).
    const { files, skills } = await this.scanTables(base, true, hooks);
    hooks.stopCheck?.();
    const snapshot: Snapshot = { id: newId(), memo, created: new Date().toISOString(), origin, parent: head?.id ?? null, tags: [], files, skills, scanStarted, ...extra };
    if (this.auditHead) snapshot.auditHead = this.auditHead();
    // One line, not pretty-printed: a record of 10,000 files is a fifth smaller.
    await writeFileAtomic(this.recordPath(snapshot.id), `${JSON.stringify(snapshot)}\n`);
    this.newest = snapshot;
    await this.index.added(summaryOf(snapshot));
    return snapshot;
  }

  diff(from: Record<string, FileEntry>, to: Record<string, FileEntry>): FileDiff {
    const added = Object.keys(to).filter((path) => !(path in from)).sort();
    const removed = Object.keys(from).filter((path) => !(path in to)).sort();
    const changed = Object.keys(to).filter((path) => path in from && from[path]!.hash !== to[path]!.hash).sort();
    return { added, removed, changed };
  }

  /** Where journaled changes apply. */
  get roots(): ChangeRoots {
    return { data: this.dataDir, skills: this.skillsDir };
  }

  /**
   * Restores data/ and skills/ to a snapshot exactly: files created since are removed, changed or
   * missing ones rewritten (a snapshot without a skills table leaves skills/ alone). Every object needed
   * is read and checked first, so a damaged repository changes nothing. A stop is honoured only until
   * the first file is changed: a rollback half applied would be a mix. `beforeSkills` is told which
   * skills are about to change (to keep their versions).
   */
  async rollback(id: string, before: (path: string, op: 'rollback' | 'remove') => Promise<void> = async () => undefined, hooks: WorkHooks = {},
    beforeSkills: (names: string[]) => Promise<void> = async () => undefined): Promise<RollbackDiff> {
    const target = await this.get(id);
    const now = await this.scanNow({ ...(hooks.stopCheck ? { stopCheck: hooks.stopCheck } : {}) });
    // From now to the snapshot: what it has that is gone or different comes back; what it lacks goes.
    const change = this.diff(now.files, target.files);
    const restore = [...change.added, ...change.changed];
    const skills = target.skills ? this.diff(now.skills, target.skills) : undefined;
    const restoreSkills = skills ? [...skills.added, ...skills.changed] : [];
    // Every object is read (and so checked) before anything changes: a damaged repository changes nothing.
    for (const [table, paths] of [[target.files, restore], [target.skills ?? {}, restoreSkills]] as const) {
      for (const path of paths) {
        hooks.stopCheck?.();
        await this.objects.get(table[path]!.hash);
      }
    }
    hooks.stopCheck?.();
    const writes: FileChange['writes'] = [];
    for (const path of restore) {
      const text = await hooks.writeAs?.(path, () => this.objects.get(target.files[path]!.hash));
      writes.push(text === undefined ? { path, hash: target.files[path]!.hash } : { path, text });
    }
    for (const path of change.changed) await before(path, 'rollback');
    for (const path of change.removed) await before(path, 'remove');
    if (skills) await beforeSkills(skillNames([...skills.changed, ...skills.removed, ...skills.added]));
    const total = restore.length + change.removed.length + restoreSkills.length + (skills?.removed.length ?? 0);
    hooks.onProgress?.(0, total, 'files being restored');
    // Journaled: a crash midway is finished at the next start, never left part old, part new.
    await applyJournaled(this.roots, this.objects, this.journal, {
      label: `rollback to snapshot ${id}`,
      writes, removes: change.removed,
      ...(skills ? { skills: { writes: restoreSkills.map((path) => ({ path, hash: target.skills![path]!.hash })), removes: skills.removed } } : {}),
    });
    hooks.onProgress?.(total, total, 'files restored');
    return skills ? { ...change, skills } : change;
  }

  /**
   * Changes a snapshot's tags. One change at a time: each reads the record and writes it back whole, so
   * two at once (tag a, tag b) would keep only the last one's.
   */
  setTags(id: string, change: (tags: string[]) => string[]): Promise<Snapshot> {
    const next = this.tagging.then(() => this.applyTags(id, change));
    this.tagging = next.catch(() => undefined);
    return next;
  }

  private async applyTags(id: string, change: (tags: string[]) => string[]): Promise<Snapshot> {
    const snapshot = await this.get(id);
    snapshot.tags = [...new Set(change(snapshot.tags))].sort();
    // Announced first: a crash between the record and the index leaves the index reading the record.
    await this.index.rewriting(id);
    await writeFileAtomic(this.recordPath(id), `${JSON.stringify(snapshot)}\n`);
    await this.index.rewritten(id, snapshot.tags);
    return snapshot;
  }

  /** After records were removed: the index of the snapshots written anew without them. */
  compactIndex(): Promise<void> {
    return this.index.rewrite();
  }

  /** Every record, oldest first (each read whole: for the rare passes over the whole history). */
  private async *allRecords(): AsyncGenerator<Snapshot> {
    for (const summary of await this.list()) yield await this.get(summary.id);
  }

  /**
   * Drops objects no snapshot refers to (and packs a crash left without an index). A change the intent
   * journal still holds (a rollback a crash cut short, not finished yet) keeps the objects it writes:
   * its snapshot may be gone, and the change must still be finished from them.
   */
  async purge(): Promise<{ removed: number }> {
    const referenced = new Set<string>();
    for (const { intent } of await this.journal.pending()) {
      for (const write of [...intent.writes, ...(intent.skills?.writes ?? [])]) if (write.hash !== undefined) referenced.add(write.hash);
    }
    for await (const snapshot of this.allRecords()) for (const file of tableEntries(snapshot)) referenced.add(file.hash);
    return { removed: await this.objects.keepOnly(referenced) };
  }

  /** Reads every referenced object again and reports the missing or damaged ones, and records that do not parse. */
  async verify(): Promise<{ snapshots: number; objects: number; damaged: { object: string; reason: string }[] }> {
    let snapshots = 0;
    const hashes = new Set<string>();
    const listed = new Set<string>();
    for await (const snapshot of this.allRecords()) {
      snapshots++;
      listed.add(snapshot.id);
      for (const file of tableEntries(snapshot)) hashes.add(file.hash);
    }
    const damaged: { object: string; reason: string }[] = [];
    // The index leaves out a record that does not parse; it is named here.
    for (const name of await readdir(this.records).catch(() => [] as string[])) {
      const id = name.slice(0, -5);
      if (name.endsWith('.json') && isValidId(id) && !listed.has(id)) damaged.push({ object: `snapshot record ${id}`, reason: 'the record does not parse' });
    }
    for (const hash of hashes) await this.objects.get(hash).catch((error: Error) => damaged.push({ object: hash, reason: error.message }));
    return { snapshots, objects: hashes.size, damaged };
  }
}

/** Every file entry of a record, data/'s and skills/'. */
function tableEntries(snapshot: Pick<Snapshot, 'files' | 'skills'>): FileEntry[] {
  return [...Object.values(snapshot.files), ...Object.values(snapshot.skills ?? {})];
}

/** The skills (first segments) some skills/-relative paths belong to, each once, sorted. */
export function skillNames(paths: readonly string[]): string[] {
  return [...new Set(paths.map((path) => path.split('/')[0]!))].sort();
}

/**
 * Every entry under `root`, recursively; none when `root` does not exist (skills/ before the first
 * skill). Any other failure throws: a listing cut short (a folder unreadable, or removed mid-walk)
 * taken as empty would make a snapshot without the files, and a rollback to it would remove them all.
 */
async function listTree(root: string): Promise<Dirent[]> {
  try {
    return await readdir(root, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(root)) return [];
    throw new KernelError('WORKSPACE_INVALID', `Could not list ${root}: ${(error as Error).message}; nothing was changed, try again`, { cause: error });
  }
}

/** A file's bytes, or undefined when it no longer exists. */
function readOrAbsent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A root-relative path with forward slashes, from a directory entry of a recursive listing. */
function relativePath(root: string, parentPath: string, name: string): string {
  if (parentPath === root) return name;
  const folder = parentPath.startsWith(root + sep) ? parentPath.slice(root.length + 1) : relative(root, parentPath);
  return `${sep === '/' ? folder : folder.split(sep).join('/')}/${name}`;
}
