import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeJsonAtomic, type Logger } from '../../core/index.js';

/**
 * What the kernel remembers of a skill, outside the skill's own files: who last wrote it through the
 * kernel (bound to the SKILL.md it wrote, by hash) and when it was last loaded.
 *
 * Provenance lives here and not in the front matter because a skill's text is written by whoever made
 * it: a skill downloaded from the web could claim `updatedBy: person:alice` in its own front matter.
 * A record the kernel keeps, and that holds only while the file is the one the kernel wrote, cannot be
 * forged by the text it describes; a hand edit on disk shows as "changed on disk".
 */
export interface SkillRecord {
  updatedBy?: string;
  updatedAt?: string;
  /** sha256 of the SKILL.md written with updatedBy. */
  sha256?: string;
  /** Where an install came from: a path or a URL. */
  source?: string;
  lastLoadedAt?: string;
}

interface RecordsFile {
  version: 1;
  skills: Record<string, SkillRecord>;
}

export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** agent/skills.json: read once, written whole (atomically) after every change, one write at a time. */
export class SkillRecords {
  private readonly records = new Map<string, SkillRecord>();
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly file: string, private readonly log: Logger) {}

  static async open(file: string, log: Logger): Promise<SkillRecords> {
    const store = new SkillRecords(file, log);
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<RecordsFile>;
      for (const [name, record] of Object.entries(parsed.skills ?? {})) if (record && typeof record === 'object') store.records.set(name, record);
    } catch (error) {
      // A missing file is a workspace without skills yet; a damaged one loses only load times and provenance.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('agent/skills.json could not be read; starting without skill records', { error: String(error) });
    }
    return store;
  }

  get(name: string): SkillRecord | undefined {
    return this.records.get(name);
  }

  /** Who wrote this SKILL.md, if the kernel wrote exactly this text; 'changed on disk' if it wrote another. */
  provenance(name: string, skillMdSha256: string): string | undefined {
    const record = this.records.get(name);
    if (!record?.updatedBy) return undefined;
    return record.sha256 === skillMdSha256 ? record.updatedBy : 'changed on disk';
  }

  async written(name: string, record: Pick<SkillRecord, 'updatedBy' | 'sha256' | 'source'>, at = new Date()): Promise<void> {
    const previous = this.records.get(name);
    this.records.set(name, { ...(previous?.lastLoadedAt ? { lastLoadedAt: previous.lastLoadedAt } : {}), ...record, updatedAt: at.toISOString() });
    await this.save();
  }

  async loaded(name: string, at = new Date()): Promise<void> {
    this.records.set(name, { ...this.records.get(name), lastLoadedAt: at.toISOString() });
    await this.save();
  }

  async renamed(from: string, to: string): Promise<void> {
    const record = this.records.get(from);
    this.records.delete(from);
    if (record) this.records.set(to, record);
    await this.save();
  }

  async removed(name: string): Promise<void> {
    if (this.records.delete(name)) await this.save();
  }

  private async save(): Promise<void> {
    const snapshot: RecordsFile = { version: 1, skills: Object.fromEntries([...this.records].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
    const next = this.writing.then(() => writeJsonAtomic(this.file, snapshot));
    this.writing = next.catch((error: unknown) => this.log.warn('agent/skills.json could not be written', { error: String(error) }));
    await next;
  }
}
