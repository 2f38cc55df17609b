import { readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic, type IntentJournal } from '../../core/index.js';
import type { ObjectStore } from './object-store.js';

/** A change of several files of data/: each written from an object (by hash) or from text, or removed. */
export interface FileChange {
  /** What the change is (`rollback <snapshot>`, `turn rollback <session>/<turn>`), for the log. */
  label: string;
  writes: { path: string; hash?: string; text?: string }[];
  removes: string[];
}

/**
 * Applies a change of several files all-or-nothing across a crash: the journal holds it, synced,
 * before the first file is touched, and lets it go after the last. Every step can be repeated, so an
 * interrupted change is finished at the next start (`finishInterrupted`) rather than left half done.
 */
export async function applyJournaled(dataDir: string, objects: ObjectStore, journal: IntentJournal<FileChange>, change: FileChange): Promise<void> {
  if (change.writes.length === 0 && change.removes.length === 0) return;
  const id = await journal.begin(change);
  await applyFileChange(dataDir, objects, change);
  await journal.done(id);
}

/** Finishes every change a crash cut short; returns their labels. */
export async function finishInterrupted(dataDir: string, objects: ObjectStore, journal: IntentJournal<FileChange>): Promise<string[]> {
  const finished: string[] = [];
  for (const { id, intent } of await journal.pending()) {
    await applyFileChange(dataDir, objects, intent);
    await journal.done(id);
    finished.push(intent.label);
  }
  return finished;
}

async function applyFileChange(dataDir: string, objects: ObjectStore, change: FileChange): Promise<void> {
  const file = (path: string) => join(dataDir, ...path.split('/'));
  for (const write of change.writes) {
    const content = write.text !== undefined ? write.text : await objects.get(write.hash!);
    await writeFileAtomic(file(write.path), content);
  }
  for (const path of change.removes) await rm(file(path), { force: true });
  await removeEmptyFolders(dataDir, change.removes.map((path) => dirname(path)));
}

/** Folders left empty by removed files go too (a document's folder of children), deepest first. */
async function removeEmptyFolders(dataDir: string, folders: string[]): Promise<void> {
  const unique = [...new Set(folders)].filter((folder) => folder !== '.').sort((a, b) => b.length - a.length);
  for (const folder of unique) {
    const path = join(dataDir, ...folder.split('/'));
    if ((await readdir(path).catch(() => ['x'])).length === 0) await rm(path, { recursive: true, force: true });
  }
}
