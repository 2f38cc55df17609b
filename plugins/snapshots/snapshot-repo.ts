import { statSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { KernelError, NotFoundError, isValidId, newId, writeJsonAtomic, type IntentJournal } from '../../core/index.js';
import { applyJournaled, type FileChange } from './file-change.js';
import { ObjectStore, sha256 } from './object-store.js';

export interface FileEntry { hash: string; size: number; mtimeMs: number }

export interface Snapshot {
  id: string;
  memo: string;
  created: string;
  /** `person:<name>` or `agent:<session>/<turn>`. */
  origin: string;
  parent: string | null;
  tags: string[];
  /** data/-relative path → content. */
  files: Record<string, FileEntry>;
  /**
   * Where the audit log ended when the snapshot was taken: an anchor `quire audit verify` holds the log
   * against, kept outside the log. Absent in snapshots taken before it was recorded.
   */
  auditHead?: { seq: number; hash: string };
}

export interface FileDiff { added: string[]; removed: string[]; changed: string[] }

/** How long work is watched: a stop check at each safe point (it throws to stop), and progress. */
export interface WorkHooks {
  stopCheck?(): void;
  onProgress?(done: number, total: number, message: string): void;
}

/** Changed files read (and stored) at once: enough to keep the disk busy, few enough for memory. */
const SCAN_BATCH = 16;

/** Dot-files of the kernel's own writes in progress are never part of a snapshot. */
function isTemporary(path: string): boolean {
  return path.split('/').some((part) => part.startsWith('.') && part !== '.notebook.json');
}

/**
 * The workspace repository (`<workspace>/repo/`): content-addressed objects and one small JSON record
 * per snapshot. Callers hold the notes' writes while creating or rolling back.
 */
export class SnapshotRepo {
  readonly objects: ObjectStore;
  private readonly records: string;

  constructor(
    readonly repoDir: string,
    readonly dataDir: string,
    readonly journal: IntentJournal<FileChange>,
    private readonly auditHead?: () => { seq: number; hash: string },
  ) {
    this.objects = new ObjectStore(join(repoDir, 'objects'));
    this.records = join(repoDir, 'snapshots');
  }

  private recordPath(id: string): string {
    if (!isValidId(id)) throw new KernelError('INVALID_INPUT', `'${String(id).slice(0, 40)}' is not a snapshot id`, { details: { field: 'id' } });
    return join(this.records, `${id}.json`);
  }

  async list(): Promise<Snapshot[]> {
    const names = (await readdir(this.records).catch(() => [] as string[])).filter((name) => name.endsWith('.json')).sort();
    const out: Snapshot[] = [];
    for (const name of names) out.push(JSON.parse(await readFile(join(this.records, name), 'utf8')) as Snapshot);
    return inCreationOrder(out);
  }

  async get(id: string): Promise<Snapshot> {
    const text = await readFile(this.recordPath(id), 'utf8').catch(() => undefined);
    if (text === undefined) throw new NotFoundError('NOT_FOUND', `No snapshot with id '${id}'`, { details: { id } });
    return JSON.parse(text) as Snapshot;
  }

  /** The newest snapshot, whose file table lets the next one skip unchanged files. */
  async latest(): Promise<Snapshot | undefined> {
    return (await this.list()).at(-1);
  }

  /**
   * Files of data/ as they are now: size and mtime from the disk, and hashes only where `known` cannot
   * vouch for a file. Stats are synchronous (a few microseconds each; writes are paused meanwhile) and
   * changed files are read and stored a batch at a time.
   */
  async scan(known: Record<string, FileEntry> = {}, store = false, hooks: WorkHooks = {}): Promise<Record<string, FileEntry>> {
    const out: Record<string, FileEntry> = {};
    const changed: { path: string; size: number; mtimeMs: number }[] = [];
    const entries = await readdir(this.dataDir, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = relative(this.dataDir, join(entry.parentPath, entry.name)).split(sep).join('/');
      if (isTemporary(path)) continue;
      const info = statSync(join(this.dataDir, path));
      const before = known[path];
      if (before && before.size === info.size && before.mtimeMs === info.mtimeMs) out[path] = before;
      else changed.push({ path, size: info.size, mtimeMs: info.mtimeMs });
    }
    for (let i = 0; i < changed.length; i += SCAN_BATCH) {
      hooks.stopCheck?.();
      hooks.onProgress?.(i, changed.length, 'changed files read');
      await Promise.all(changed.slice(i, i + SCAN_BATCH).map(async (file) => {
        const content = await readFile(join(this.dataDir, file.path));
        out[file.path] = { hash: store ? await this.objects.put(content) : sha256(content), size: file.size, mtimeMs: file.mtimeMs };
      }));
    }
    return out;
  }

  /** A new snapshot: only files whose size or mtime changed since the last one are read and hashed. */
  async create(memo: string, origin: string, hooks: WorkHooks = {}): Promise<Snapshot> {
    const parent = await this.latest();
    // A stop before the record is written leaves no snapshot (objects stored meanwhile are only unreferenced).
    const files = await this.scan(parent?.files, true, hooks);
    hooks.stopCheck?.();
    const snapshot: Snapshot = { id: newId(), memo, created: new Date().toISOString(), origin, parent: parent?.id ?? null, tags: [], files };
    if (this.auditHead) snapshot.auditHead = this.auditHead();
    await writeJsonAtomic(this.recordPath(snapshot.id), snapshot);
    return snapshot;
  }

  diff(from: Record<string, FileEntry>, to: Record<string, FileEntry>): FileDiff {
    const added = Object.keys(to).filter((path) => !(path in from)).sort();
    const removed = Object.keys(from).filter((path) => !(path in to)).sort();
    const changed = Object.keys(to).filter((path) => path in from && from[path]!.hash !== to[path]!.hash).sort();
    return { added, removed, changed };
  }

  /**
   * Restores data/ to a snapshot exactly: files created since are removed, changed or missing ones
   * rewritten. Every object needed is read and checked first, so a damaged repository changes nothing.
   * A stop is honoured only until the first file is changed: a rollback half applied would be a mix.
   */
  async rollback(id: string, before: (path: string, op: 'rollback' | 'remove') => Promise<void> = async () => undefined, hooks: WorkHooks = {}): Promise<FileDiff> {
    const target = await this.get(id);
    const now = await this.scan((await this.latest())?.files, false, { ...(hooks.stopCheck ? { stopCheck: hooks.stopCheck } : {}) });
    // From now to the snapshot: what it has that is gone or different comes back; what it lacks goes.
    const change = this.diff(now, target.files);
    const restore = [...change.added, ...change.changed];
    // Every object is read (and so checked) before anything changes: a damaged repository changes nothing.
    for (const path of restore) {
      hooks.stopCheck?.();
      await this.objects.get(target.files[path]!.hash);
    }
    hooks.stopCheck?.();
    for (const path of change.changed) await before(path, 'rollback');
    for (const path of change.removed) await before(path, 'remove');
    // Journaled: a crash midway is finished at the next start, never left part old, part new.
    await applyJournaled(this.dataDir, this.objects, this.journal, {
      label: `rollback to snapshot ${id}`,
      writes: restore.map((path) => ({ path, hash: target.files[path]!.hash })),
      removes: change.removed,
    });
    hooks.onProgress?.(restore.length + change.removed.length, restore.length + change.removed.length, 'files restored');
    return change;
  }

  async setTags(id: string, change: (tags: string[]) => string[]): Promise<Snapshot> {
    const snapshot = await this.get(id);
    snapshot.tags = [...new Set(change(snapshot.tags))].sort();
    await writeJsonAtomic(this.recordPath(id), snapshot);
    return snapshot;
  }

  /** Drops objects no snapshot refers to. */
  async purge(): Promise<{ removed: number }> {
    const referenced = new Set((await this.list()).flatMap((snapshot) => Object.values(snapshot.files).map((file) => file.hash)));
    let removed = 0;
    for (const hash of await this.objects.list()) {
      if (referenced.has(hash)) continue;
      await this.objects.remove(hash);
      removed++;
    }
    return { removed };
  }

  /** Reads every referenced object again and reports the missing or damaged ones. */
  async verify(): Promise<{ snapshots: number; objects: number; damaged: { object: string; reason: string }[] }> {
    const snapshots = await this.list();
    const hashes = new Set(snapshots.flatMap((snapshot) => Object.values(snapshot.files).map((file) => file.hash)));
    const damaged: { object: string; reason: string }[] = [];
    for (const hash of hashes) await this.objects.get(hash).catch((error: Error) => damaged.push({ object: hash, reason: error.message }));
    return { snapshots: snapshots.length, objects: hashes.size, damaged };
  }
}

/**
 * Oldest first. Ids and timestamps can tie (two snapshots in one millisecond, as at a turn's start and
 * end), so ties are broken by the parent chain: a snapshot comes after the one it was taken on top of.
 */
function inCreationOrder(snapshots: Snapshot[]): Snapshot[] {
  const byId = new Map(snapshots.map((snapshot) => [snapshot.id, snapshot]));
  const depth = new Map<string, number>();
  const depthOf = (snapshot: Snapshot): number => {
    let hops = 0;
    const seen = new Set<string>();
    for (let at: Snapshot | undefined = snapshot; at?.parent && !seen.has(at.id); at = byId.get(at.parent)) {
      seen.add(at.id);
      const known = depth.get(at.parent);
      if (known !== undefined) { hops += known + 1; break; }
      hops++;
    }
    depth.set(snapshot.id, hops);
    return hops;
  };
  const keyed = snapshots.map((snapshot) => ({ snapshot, depth: depthOf(snapshot) }));
  keyed.sort((a, b) => a.snapshot.created.localeCompare(b.snapshot.created) || a.depth - b.depth || a.snapshot.id.localeCompare(b.snapshot.id));
  return keyed.map((entry) => entry.snapshot);
}
