import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic, type IntentJournal } from '../../core/index.js';

/**
 * Documents that change together (a block moved from one to another) as the journal holds them: each
 * file's new text, data/-relative. Written and synced before the first file is touched, so a crash
 * between two files is finished at the next start: without it, a kill between them left the moved
 * block in both documents, and `index rebuild` refused the workspace until one was edited by hand.
 */
export interface TogetherIntent {
  files: { path: string; text: string }[];
}

/**
 * Finishes the changes a crash cut short, before the start-up sync reads data/: every file of the
 * change gets its new text (writing it again is harmless when it had it). A file whose folder is gone
 * (its notebook removed by hand meanwhile) is left alone. Returns the files written.
 */
export async function finishInterruptedTogether(dataDir: string, journal: IntentJournal<TogetherIntent>): Promise<string[]> {
  const written: string[] = [];
  for (const { id, intent } of await journal.pending()) {
    for (const { path, text } of intent.files) {
      const file = join(dataDir, ...path.split('/'));
      if (!(await stat(dirname(file)).then((info) => info.isDirectory(), () => false))) continue;
      await writeFileAtomic(file, text);
      written.push(path);
    }
    await journal.done(id);
  }
  return written;
}
