import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { makeFolderDurably, syncFolder, writeJsonAtomic } from './atomic-write.js';

export { makeFolderDurably };

/**
 * Record names sort in the order the changes were begun, even several in one millisecond: the
 * replay must apply them in that order (a later change over the same file wins). A UTC stamp to the
 * millisecond, then a per-process sequence. Names of older kernels (`<14 digits>-<7 chars>`, ordered
 * only to the second) are still read; they sort before any new name of the same second.
 */
let lastStamp = '';
let sequence = 0;
function recordName(): string {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
  sequence = stamp === lastStamp ? sequence + 1 : 0;
  lastStamp = stamp;
  return `${stamp}-${sequence.toString(36).padStart(6, '0')}`;
}
const RECORD_NAME = /^(\d{14}-[0-9a-z]{7}|\d{17}-[0-9a-z]{6})\.json$/;

export interface PendingIntent<T> {
  id: string;
  intent: T;
}

/**
 * Makes a change of several files all-or-nothing across a crash: the intent is written and synced
 * before the first file is touched, and removed once the last one is done. At the next start, an
 * intent still there names a change that was cut short; its owner finishes it (every step must be
 * repeatable) or undoes it. One folder per kind of change (`<workspace>/.quire/journal/<kind>/`).
 */
export class IntentJournal<T> {
  constructor(private readonly dir: string) {}

  /** Records what is about to change; resolves once the record is durable. */
  async begin(intent: T): Promise<string> {
    const id = recordName();
    try {
      await writeJsonAtomic(join(this.dir, `${id}.json`), intent);
    } catch (error) {
      // It may have been renamed into place before the failure (the folder's fsync): the caller, told
      // the change failed, changes nothing, so the record must not make the next start do it.
      await rm(join(this.dir, `${id}.json`), { force: true }).catch(() => undefined);
      throw error;
    }
    return id;
  }

  /** The change is complete: its record goes (durably, so a crash after this does not replay it). */
  async done(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
    await syncFolder(this.dir);
  }

  /**
   * Changes that were begun and never marked done, oldest first; a record that does not parse is skipped.
   * Called once at start, before any change: it also sweeps the temporary files of records cut short.
   */
  async pending(): Promise<PendingIntent<T>[]> {
    await this.ensureFolder();
    const all = await readdir(this.dir).catch(() => [] as string[]);
    // A record's temporary file left by a crash while it was written: that change was never begun.
    for (const name of all) if (name.startsWith('.') && name.endsWith('.tmp')) await rm(join(this.dir, name), { force: true });
    const names = all.filter((name) => RECORD_NAME.test(name)).sort();
    const found: PendingIntent<T>[] = [];
    for (const name of names) {
      // Unreadable (EACCES, EIO) is not "never begun": the change it names may be half done. The start
      // stops with the record named (it was deleted, and a block could be left in two documents or none).
      const text = await readFile(join(this.dir, name), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new KernelError('WORKSPACE_INVALID', `${join(this.dir, name)} records a change that may be half done and cannot be read (${error.code ?? error.message}): make it readable and start again`, { details: { file: join(this.dir, name) }, cause: error });
      });
      try {
        found.push({ id: name.slice(0, -5), intent: JSON.parse(text) as T });
      } catch {
        // A record is written atomically, so one that does not parse was never begun: nothing was changed under it.
        await rm(join(this.dir, name), { force: true });
      }
    }
    return found;
  }

  private ensureFolder(): Promise<void> {
    return makeFolderDurably(this.dir);
  }
}

