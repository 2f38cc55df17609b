import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { pathExists, type IntentJournal } from '../../core/index.js';
import { isDocumentPath } from './write-journal.js';

/**
 * A folder being removed, renamed aside first (hidden, beside where it was) so that it leaves data/ at
 * once: `rm -r` of a tree cut short by a kill left some child documents without the document above
 * them (orphans), or a notebook part removed. Swept at start if a kill came before its removal ended.
 */
export const REMOVING = /^\..+\.[0-9a-f]{12}\.removing$/;

export function asideName(folder: string): string {
  return join(dirname(folder), `.${basename(folder)}.${randomBytes(6).toString('hex')}.removing`);
}

/** A document's removal as the journal holds it (data/-relative): its file, its folder of children, where that goes aside. */
export interface RemovalIntent {
  file: string;
  folder: string;
  aside: string;
}

/**
 * Removes a document file and its folder of child documents whole across a crash: the intent first
 * (durable), then the folder aside and the file, then the intent done; the folder set aside is then
 * deleted (what a kill leaves of it is swept at start).
 */
export async function removeDocumentFiles(dataDir: string, file: string, folder: string, journal: IntentJournal<RemovalIntent>): Promise<void> {
  const aside = asideName(folder);
  const relativeTo = (path: string): string => relative(dataDir, path).split(sep).join('/');
  const id = await journal.begin({ file: relativeTo(file), folder: relativeTo(folder), aside: relativeTo(aside) });
  try {
    await finish(file, folder, aside);
  } catch (error) {
    // The call fails, so nothing may change now nor at the next start: the folder goes back, and the
    // record goes if all is as it was (otherwise the next start finishes the removal it began).
    if (await pathExists(file)) {
      if (!(await pathExists(folder)) && await pathExists(aside)) await rename(aside, folder).catch(() => undefined);
      if (!(await pathExists(aside))) await journal.done(id).catch(() => undefined);
    }
    throw error;
  }
  // A record that cannot be removed is harmless: finishing it again at the next start finds nothing to do.
  await journal.done(id).catch(() => undefined);
  // What a failure here leaves aside is swept at the next start; the removal itself is done.
  await rm(aside, { recursive: true, force: true }).catch(() => undefined);
}

async function finish(file: string, folder: string, aside: string): Promise<void> {
  if (await pathExists(folder)) await rename(folder, aside);
  await rm(file, { force: true });
}

/**
 * Finishes the removals a crash cut short, before the start-up sync reads data/: the document and its
 * children go, as the removal that was begun would have done. Returns the documents removed.
 */
export async function finishInterruptedRemovals(dataDir: string, journal: IntentJournal<RemovalIntent>): Promise<string[]> {
  const done: string[] = [];
  const at = (path: string): string => join(dataDir, ...path.split('/'));
  for (const { id, intent } of await journal.pending()) {
    // Only what a removal would have written: a document's file, its folder beside it, a hidden name beside that.
    const valid = isDocumentPath(intent.file) && intent.folder === intent.file.slice(0, -'.json'.length)
      && dirname(intent.aside) === dirname(intent.folder) && REMOVING.test(basename(intent.aside));
    if (valid) {
      await finish(at(intent.file), at(intent.folder), at(intent.aside));
      await rm(at(intent.aside), { recursive: true, force: true }).catch(() => undefined);
      done.push(intent.file);
    }
    await journal.done(id);
  }
  return done;
}

