import { readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic, type IntentJournal } from '../../core/index.js';
import type { ObjectStore } from './object-store.js';

/** Files of one folder to write (from an object, by hash, or from text) and to remove; paths relative to it. */
export interface TreeChange {
  writes: { path: string; hash?: string; text?: string }[];
  removes: string[];
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
  const id = await journal.begin(change);
  await applyFileChange(roots, objects, change);
  await journal.done(id);
}

/** Finishes every change a crash cut short; returns their labels. */
export async function finishInterrupted(roots: ChangeRoots, objects: ObjectStore, journal: IntentJournal<FileChange>): Promise<string[]> {
  const finished: string[] = [];
  for (const { id, intent } of await journal.pending()) {
    await applyFileChange(roots, objects, intent);
    await journal.done(id);
    finished.push(intent.label);
  }
  return finished;
}

async function applyFileChange(roots: ChangeRoots, objects: ObjectStore, change: FileChange): Promise<void> {
  await applyTreeChange(roots.data, objects, change);
  if (change.skills) await applyTreeChange(roots.skills, objects, change.skills);
}

async function applyTreeChange(root: string, objects: ObjectStore, change: TreeChange): Promise<void> {
  const file = (path: string) => join(root, ...path.split('/'));
  for (const write of change.writes) {
    const content = write.text !== undefined ? write.text : await objects.get(write.hash!);
    await writeFileAtomic(file(write.path), content);
  }
  for (const path of change.removes) await rm(file(path), { force: true });
  await removeEmptyFolders(root, change.removes.map((path) => dirname(path)));
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
