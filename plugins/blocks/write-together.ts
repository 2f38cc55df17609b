import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, type IntentJournal } from '../../core/index.js';

/**
 * Documents that change together (a block moved from one to another) as the journal holds them: each
 * file's new text, data/-relative. Written and synced before the first file is touched, so a crash
 * between two files is finished at the next start: without it, a kill between them left the moved
 * block in both documents, and `index rebuild` refused the workspace until one was edited by hand.
 */
export interface TogetherIntent {
  /** `before`: the SHA-256 of the file's text when the change began. */
  files: { path: string; text: string; before: string }[];
}

export const textHash = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/**
 * Finishes the changes a crash cut short, before the start-up sync reads data/: a file still as it
 * was when the change began gets its new text; one that has it already is left, and so is one that
 * is neither (changed since, should a record outlive its change because it could not be removed:
 * writing it would put back an older text), or gone. Returns the files written and those left as they were.
 */
export async function finishInterruptedTogether(dataDir: string, journal: IntentJournal<TogetherIntent>): Promise<{ written: string[]; changedSince: string[] }> {
  const written: string[] = [];
  const changedSince: string[] = [];
  for (const { id, intent } of await journal.pending()) {
    for (const { path, text, before } of intent.files) {
      const file = join(dataDir, ...path.split('/'));
      const now = await readFile(file).catch(() => undefined);
      if (now === undefined) continue;
      const hash = textHash(now);
      if (hash === before) {
        await writeFileAtomic(file, text);
        written.push(path);
      } else if (hash !== textHash(text)) changedSince.push(path);
    }
    await journal.done(id);
  }
  return { written, changedSince };
}
