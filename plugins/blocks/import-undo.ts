import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncFolder, type IntentJournal } from '../../core/index.js';
import { isDocumentPath } from './write-journal.js';
import { textHash } from './write-together.js';

/** A step of an import as the journal holds it: the documents it writes (data/-relative) and what each will hold. */
export interface ImportIntent {
  /** What was being imported, for the log. */
  source: string;
  files: { path: string; sha256: string }[];
}

export function importedText(path: string, text: string): ImportIntent['files'][number] {
  return { path, sha256: textHash(text) };
}

/**
 * Undoes the imports a crash cut short, before the start-up sync reads data/: an import answers only
 * once all its documents are written, so one killed midway left part of a folder imported, and running
 * it again would have made the first part twice. Each step of an import is recorded before its files are
 * written, and the records go once the import answers; a record found at start names documents of an
 * import that never answered, and they go again, children first. A document is kept if it changed since
 * the import wrote it (an acknowledged edit made meanwhile), and so is one that has documents below it
 * that the import did not write. Returns the documents removed and those kept.
 */
export async function undoInterruptedImports(dataDir: string, journal: IntentJournal<ImportIntent>): Promise<{ sources: string[]; removed: string[]; kept: string[] }> {
  const sources = new Set<string>();
  const removed: string[] = [];
  const kept: string[] = [];
  const at = (path: string): string => join(dataDir, ...path.split('/'));
  const pending = await journal.pending();
  // The newest step first, and in each its last documents first: children before their parents.
  for (const { id, intent } of [...pending].reverse()) {
    const files = Array.isArray(intent.files) ? intent.files : [];
    if (typeof intent.source === 'string') sources.add(intent.source);
    const touched = new Set<string>();
    for (const file of [...files].reverse()) {
      if (typeof file?.path !== 'string' || typeof file.sha256 !== 'string' || !isDocumentPath(file.path)) continue;
      const path = at(file.path);
      const text = await readFile(path).catch(() => undefined);
      if (text === undefined) continue;
      const children = at(file.path.slice(0, -'.json'.length));
      if (textHash(text) !== file.sha256 || !(await emptyOfDocuments(children))) {
        kept.push(file.path);
        continue;
      }
      await rm(children, { recursive: true, force: true });
      await rm(path, { force: true });
      touched.add(dirname(path));
      removed.push(file.path);
    }
    // Durable before the record goes: a crash from here on finds the documents gone, or undoes again.
    for (const folder of touched) await syncFolder(folder).catch(ignoreMissing);
    await journal.done(id);
  }
  return { sources: [...sources], removed, kept };
}

/** A document's folder of children holds none (it may not exist, or hold temporary files a kill left). */
async function emptyOfDocuments(folder: string): Promise<boolean> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return names.every((name) => name.startsWith('.') && name.endsWith('.tmp'));
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
