import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { isValidId } from '../ids.js';
import type { Logger } from '../log.js';
import type { JobRecord } from './job-types.js';

/**
 * Job records on disk, one file each (`<workspace>/jobs/<id>.json`, written atomically), so that a
 * record survives a restart and a job that was running when the kernel stopped can say so. Writes of
 * one record are chained, so a late progress write never lands after the final one.
 */
export class JobStore {
  private readonly writes = new Map<string, Promise<void>>();

  constructor(private readonly dir: string, private readonly log: Logger) {}

  /** Every readable record, oldest first (ids sort by creation time); an unreadable file is skipped and logged. */
  async readAll(): Promise<JobRecord[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const records: JobRecord[] = [];
    for (const name of names.filter((file) => file.endsWith('.json')).sort()) {
      const id = name.slice(0, -5);
      if (!isValidId(id)) continue;
      try {
        const record = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as JobRecord | null;
        // A record edited by hand (or of another shape) is left out, not taken: the start read its fields.
        if (typeof record !== 'object' || record === null || record.id !== id || typeof record.state !== 'string' || typeof record.progress !== 'object' || record.progress === null) {
          this.log.warn('a job record is not one; it is left as it is', { file: join(this.dir, name) });
          continue;
        }
        records.push(record);
      } catch (error) {
        this.log.warn('a job record cannot be read; it is left as it is', { file: join(this.dir, name), error: (error as Error).message });
      }
    }
    return records;
  }

  /** Queues a write of the record as it is now; resolves when it is on disk. */
  write(record: JobRecord): Promise<void> {
    const snapshot = structuredClone(record);
    const previous = this.writes.get(record.id) ?? Promise.resolve();
    const next = previous.then(() => writeJsonAtomic(join(this.dir, `${record.id}.json`), snapshot)).catch((error: unknown) => {
      this.log.warn('a job record could not be written', { job: record.id, error: (error as Error).message });
    });
    this.writes.set(record.id, next);
    void next.then(() => { if (this.writes.get(record.id) === next) this.writes.delete(record.id); });
    return next;
  }

  async remove(id: string): Promise<void> {
    await (this.writes.get(id) ?? Promise.resolve());
    await rm(join(this.dir, `${id}.json`), { force: true });
  }

  /** Resolves once every queued write has landed. */
  async flush(): Promise<void> {
    await Promise.all([...this.writes.values()]);
  }
}
