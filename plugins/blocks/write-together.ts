import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, type IntentJournal } from '../../core/index.js';
import { isDocumentPath } from './write-journal.js';

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
 * Finishes the changes a crash cut short, before the start-up sync reads data/. Only when every file
 * of a change holds either its text from when the change began or its new one: those still old get
 * their new text. Otherwise (a file changed since, should a record outlive its change because it could
 * not be removed, or gone, or a path that is not a document's) nothing is written: writing would put
 * older texts back over later writes. Returns the files written and the changes left as they were.
 */
export async function finishInterruptedTogether(dataDir: string, journal: IntentJournal<TogetherIntent>): Promise<{ written: string[]; leftAlone: string[][] }> {
  const written: string[] = [];
  const leftAlone: string[][] = [];
  for (const { id, intent } of await journal.pending()) {
    const files = await Promise.all(intent.files.map(async ({ path, text, before }) => {
      const file = join(dataDir, ...path.split('/'));
      const now = isDocumentPath(path) ? await readFile(file).catch(() => undefined) : undefined;
      const hash = now === undefined ? undefined : textHash(now);
      return { path, file, text, old: hash === before, done: hash === textHash(text) };
    }));
    if (files.every((file) => file.old || file.done)) {
      for (const { path, file, text, old } of files) {
        if (!old) continue;
        await writeFileAtomic(file, text);
        written.push(path);
      }
    } else leftAlone.push(intent.files.map((file) => file.path));
    await journal.done(id);
  }
  return { written, leftAlone };
}
