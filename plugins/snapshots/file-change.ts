import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncFolder, writeFileAtomic, type IntentJournal } from '../../core/index.js';
import { sha256, type ObjectStore } from './object-store.js';

/** Files of one folder to write (from an object, by hash, or from text) and to remove; paths relative to it. */
export interface TreeChange {
  writes: { path: string; hash?: string; text?: string }[];
  removes: string[];
  /**
   * Each path's content before the change (its SHA-256; null: no file), recorded with the intent: a
   * change finished later (after a failure part way, or at the next start) touches only the files still
   * as they were or already as it leaves them. A file written since (an acknowledged write) is kept.
   * Absent in journals written before it: those are finished whole.
   */
  before?: Record<string, string | null>;
}

/**
 * A change of several files of data/ (and of skills/): each written from an object (by hash) or from
 * text, or removed. Journals written before skills/ was covered have no `skills`.
 */
export interface FileChange extends TreeChange {
  /** What the change is (`rollback <snapshot>`, `turn rollback <session>/<turn>`), for the log. */
  label: string;
  /** The same for `<workspace>/skills/`, relative to it. */
  skills?: TreeChange;
}

/** The folders a change applies to: the notes, and the workspace's skills. */
export interface ChangeRoots {
  data: string;
  skills: string;
}

const isEmpty = (change: TreeChange | undefined) => !change || (change.writes.length === 0 && change.removes.length === 0);

/**
 * Applies a change of several files all-or-nothing across a crash: the journal holds it, synced,
 * before the first file is touched, and lets it go after the last. Every step can be repeated, so an
 * interrupted change is finished at the next start (`finishInterrupted`) rather than left half done.
 */
export async function applyJournaled(roots: ChangeRoots, objects: ObjectStore, journal: IntentJournal<FileChange>, change: FileChange): Promise<void> {
  if (isEmpty(change) && isEmpty(change.skills)) return;
  const recorded: FileChange = { ...change, before: await contentsBefore(roots.data, change), ...(change.skills ? { skills: { ...change.skills, before: await contentsBefore(roots.skills, change.skills) } } : {}) };
  const id = await journal.begin(recorded);
  try {
    await applyFileChange(roots, objects, recorded);
  } catch (error) {
    // Once more (a passing failure); then the intent stays, to be finished file by file as space comes
    // back (finishInterrupted), never over a file written since.
    try {
      await applyFileChange(roots, objects, recorded);
    } catch {
      throw error;
    }
  }
  await journal.done(id);
}

/** What finishing the changes left pending found: their labels, and the files written since, which were kept. */
export interface Finished {
  labels: string[];
  kept: string[];
}

/**
 * Finishes every change a crash or a failure cut short: each file still as it was before the change
 * (or already as the change leaves it) is brought to what the change writes; one written since is kept.
 */
export async function finishInterrupted(roots: ChangeRoots, objects: ObjectStore, journal: IntentJournal<FileChange>): Promise<Finished> {
  const finished: Finished = { labels: [], kept: [] };
  for (const { id, intent } of await journal.pending()) {
    finished.kept.push(...await applyFileChange(roots, objects, intent, true));
    await journal.done(id);
    finished.labels.push(intent.label);
  }
  return finished;
}

/** Applies the change; with `onlyUnchanged`, skips (and returns) the files written since it was recorded. */
async function applyFileChange(roots: ChangeRoots, objects: ObjectStore, change: FileChange, onlyUnchanged = false): Promise<string[]> {
  const kept = await applyTreeChange(roots.data, objects, change, onlyUnchanged);
  if (change.skills) kept.push(...(await applyTreeChange(roots.skills, objects, change.skills, onlyUnchanged)).map((path) => `skills/${path}`));
  return kept;
}

async function applyTreeChange(root: string, objects: ObjectStore, change: TreeChange, onlyUnchanged: boolean): Promise<string[]> {
  const file = (path: string) => join(root, ...path.split('/'));
  const kept: string[] = [];
  // Written since the change was recorded: neither the content before it nor what it leaves.
  const writtenSince = async (path: string, after: string | null): Promise<boolean> => {
    if (!onlyUnchanged || change.before === undefined || !Object.hasOwn(change.before, path)) return false;
    const now = await contentHash(file(path));
    if (now === change.before[path] || now === after) return false;
    kept.push(path);
    return true;
  };
  for (const write of change.writes) {
    const content = write.text !== undefined ? write.text : await objects.get(write.hash!);
    if (await writtenSince(write.path, write.hash ?? sha256(Buffer.from(content)))) continue;
    await writeFileAtomic(file(write.path), content);
  }
  const removes: string[] = [];
  for (const path of change.removes) if (!(await writtenSince(path, null))) removes.push(path);
  for (const path of removes) await rm(file(path), { force: true });
  await removeEmptyFolders(root, removes.map((path) => dirname(path)));
  // Removals are durable before the journal lets the change go: after a power cut, a removed file could
  // come back with the record gone (the folders' entries were never synced). A folder removed as empty
  // is its parent's entry: the nearest folder still there is synced.
  for (const folder of new Set(removes.map((path) => dirname(path)))) await syncNearest(root, folder);
  return kept;
}

async function syncNearest(root: string, folder: string): Promise<void> {
  for (let at = folder; ; at = dirname(at)) {
    const path = at === '.' || at === '' ? root : join(root, ...at.split('/'));
    try {
      await syncFolder(path);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || path === root) return;
    }
  }
}

/** The SHA-256 of each file the change touches, as it is now (null: none). */
async function contentsBefore(root: string, change: TreeChange): Promise<Record<string, string | null>> {
  const before: Record<string, string | null> = {};
  for (const path of [...change.writes.map((write) => write.path), ...change.removes]) before[path] = await contentHash(join(root, ...path.split('/')));
  return before;
}

async function contentHash(path: string): Promise<string | null> {
  try {
    return sha256(await readFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Folders left empty by removed files go too (a document's folder of children, a skill's folder and
 * its subfolders), deepest first, up to but never including the root itself.
 */
async function removeEmptyFolders(root: string, folders: string[]): Promise<void> {
  const all = new Set<string>();
  for (let folder of folders) for (; folder !== '.' && folder !== '' && !all.has(folder); folder = dirname(folder)) all.add(folder);
  const deepestFirst = [...all].sort((a, b) => b.length - a.length);
  for (const folder of deepestFirst) {
    const path = join(root, ...folder.split('/'));
    if ((await readdir(path).catch(() => ['x'])).length === 0) await rm(path, { recursive: true, force: true });
  }
}
