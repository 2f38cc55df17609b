import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describeWrite, diskFull, makeFolderDurably, syncFolder, writeJsonAtomic } from '../../core/index.js';
import { isDocumentPath } from './write-journal.js';
import { textHash } from './write-together.js';

/** A step of an import as the journal holds it: the documents it writes (data/-relative) and what each will hold. */
export interface ImportStep {
  /** What was being imported, for the log. */
  source: string;
  files: { path: string; sha256: string }[];
}

const IMPORT_FOLDER = /^\d{17}-[0-9a-f]{8}$/;
const STEP_FILE = /^(\d{8})\.json$/;

/**
 * The imports under way: a folder per import (`.quire/journal/imports/<id>/`) holding a record per
 * step, written and synced before the step's files. An import that answers (done, stopped or failed)
 * renames its folder aside, one step for all its records, so that a crash never leaves part of them:
 * a folder found at start names an import that never answered, and the whole of it is undone.
 */
export class ImportJournal {
  constructor(private readonly dir: string) {}

  /** A new import's id (its folder is made with its first step). */
  begin(): string {
    return `${new Date().toISOString().replace(/\D/g, '').slice(0, 17)}-${randomBytes(4).toString('hex')}`;
  }

  /** Records step `index` of import `id`; resolves once it is durable. */
  async step(id: string, index: number, step: ImportStep): Promise<void> {
    const folder = join(this.dir, id);
    const file = join(folder, `${String(index).padStart(8, '0')}.json`);
    try {
      if (index === 0) await makeFolderDurably(folder);
      await writeJsonAtomic(file, step);
    } catch (error) {
      throw diskFull(error, describeWrite(file));
    }
  }

  /** The import answered: its records go, all at once (what the removal leaves aside is swept at start). */
  async done(id: string): Promise<void> {
    const aside = join(this.dir, `.${id}.done`);
    try {
      await rename(join(this.dir, id), aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await syncFolder(this.dir);
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  }

  /**
   * Imports that never answered, oldest first, each with its steps in order; a step that does not read
   * as one is skipped (it was never begun, or is damaged: nothing is removed on its word). Called once at
   * start: it also sweeps what answered imports left aside.
   */
  async pending(): Promise<{ id: string; steps: ImportStep[] }[]> {
    await makeFolderDurably(this.dir);
    const names = await readdir(this.dir);
    // What answered imports left aside; one that cannot be removed now is tried again at the next start.
    for (const name of names) if (name.startsWith('.')) await rm(join(this.dir, name), { recursive: true, force: true }).catch(() => undefined);
    const found: { id: string; steps: ImportStep[] }[] = [];
    for (const id of names.filter((name) => IMPORT_FOLDER.test(name)).sort()) {
      // A folder that cannot be read is left for a later start, not dropped unread.
      const entries = await readdir(join(this.dir, id)).catch(() => undefined);
      if (entries === undefined) continue;
      const files = entries.filter((name) => STEP_FILE.test(name)).sort();
      const steps: ImportStep[] = [];
      for (const file of files) {
        const step = asStep(await readFile(join(this.dir, id, file), 'utf8').then(parseOrUndefined, () => undefined));
        if (step) steps.push(step);
      }
      found.push({ id, steps });
    }
    return found;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function asStep(value: unknown): ImportStep | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { source, files } = value as { source?: unknown; files?: unknown };
  if (!Array.isArray(files)) return undefined;
  const valid = files.filter((file): file is ImportStep['files'][number] => typeof file === 'object' && file !== null
    && typeof (file as { path?: unknown }).path === 'string' && isDocumentPath((file as { path: string }).path)
    && typeof (file as { sha256?: unknown }).sha256 === 'string');
  return { source: typeof source === 'string' ? source : 'an unknown source', files: valid };
}

export function importedText(path: string, text: string): ImportStep['files'][number] {
  return { path, sha256: textHash(text) };
}

/**
 * Undoes the imports a crash cut short, before the start-up sync reads data/: an import answers only
 * once all its documents are written, so one killed midway left part of a folder imported, and running
 * it again would have made that part twice. Its documents go, children first. A document is kept if it
 * changed since the import wrote it (an acknowledged edit made meanwhile), and so is one that has
 * documents below it that the import did not write; one no longer where the import put it (moved,
 * removed) is left wherever it is. Returns what was removed, kept and not found.
 */
export async function undoInterruptedImports(dataDir: string, journal: ImportJournal): Promise<{ sources: string[]; removed: string[]; kept: string[]; notFound: number }> {
  const sources = new Set<string>();
  const removed: string[] = [];
  const kept: string[] = [];
  let notFound = 0;
  const at = (path: string): string => join(dataDir, ...path.split('/'));
  // The newest import first; in each, the last step first and its last documents first: children before parents.
  for (const { id, steps } of (await journal.pending()).reverse()) {
    const touched = new Set<string>();
    for (const step of [...steps].reverse()) {
      sources.add(step.source);
      for (const file of [...step.files].reverse()) {
        const path = at(file.path);
        const text = await readFile(path).catch(() => undefined);
        const children = at(file.path.slice(0, -'.json'.length));
        if (text === undefined) {
          notFound++;
          // Its children may have been written (and are undone above) before it was: the folder made for
          // them, left empty, would be read as children of a missing document.
          if (await folderWithoutDocuments(children)) {
            await rm(children, { recursive: true, force: true });
            touched.add(dirname(path));
          }
          continue;
        }
        if (textHash(text) !== file.sha256 || !(await emptyOfDocuments(children))) {
          kept.push(file.path);
          continue;
        }
        await rm(children, { recursive: true, force: true });
        await rm(path, { force: true });
        touched.add(dirname(path));
        removed.push(file.path);
      }
    }
    // Durable before the records go: a crash from here on finds the documents gone, or undoes again.
    for (const folder of touched) await syncFolder(folder).catch(ignoreMissing);
    await journal.done(id);
  }
  return { sources: [...sources], removed, kept, notFound };
}

/** A document's folder of children holds none: it does not exist, or holds only temporary files a kill left. */
async function emptyOfDocuments(folder: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    // Anything but its absence (unreadable, not a folder) keeps the document: nothing is removed unseen.
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  return names.every((name) => name.startsWith('.') && name.endsWith('.tmp'));
}

/** A folder that exists and holds no documents (see emptyOfDocuments). */
async function folderWithoutDocuments(folder: string): Promise<boolean> {
  return (await readdir(folder).then(() => true, () => false)) && emptyOfDocuments(folder);
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
