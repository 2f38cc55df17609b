import { appendFile, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidId, writeFileAtomic } from '../../core/index.js';
import type { Snapshot } from './snapshot-repo.js';

/** What the repository lists of a snapshot: its record with, instead of the file table, how many files it holds. */
export type SnapshotSummary = Omit<Snapshot, 'files' | 'skills' | 'scanStarted' | 'auditHead'> & { files: number };

/** A record as far as the index reads it. */
interface RecordLike extends Omit<SnapshotSummary, 'files'> { files: Record<string, unknown> }

/**
 * One line of `repo/index.jsonl`. `add`: a snapshot whose record is durable. `check`: the record of this
 * snapshot is about to be rewritten (its tags), so until a later line for it, the record is read again
 * rather than believed from here. `tags`: the record's tags after such a rewrite.
 */
type IndexLine = { add: SnapshotSummary } | { check: string } | { tags: { id: string; tags: string[] } };

export function summaryOf(record: RecordLike): SnapshotSummary {
  return { id: record.id, memo: record.memo, created: record.created, origin: record.origin, parent: record.parent, tags: record.tags, files: Object.keys(record.files).length };
}

/**
 * The head of the snapshot repository: a summary of every snapshot, so that listing them or finding the
 * latest reads one small file once per process instead of every record (each record holds the whole
 * file table). The records stay the truth and the index follows them:
 * - a line is appended only after its record is durable, and every refresh lists the records' names
 *   (a directory read, no record opened) and reads any record the index lacks, so a crash between a
 *   record and its line (or a lost, deleted or damaged index) costs a read, never a snapshot;
 * - a record rewritten in place (tags) is announced by a synced `check` line first, so a crash between
 *   the two leaves the index reading that record again;
 * - lines are parsed one by one and a line that does not parse is skipped (an append cut short).
 * Appended lines are not synced: what a power cut takes from the index the next refresh puts back.
 */
export class SnapshotIndex {
  private readonly entries = new Map<string, SnapshotSummary>();
  /** Snapshots whose record may say otherwise than the index (a `check` line not yet followed up). */
  private readonly unsure = new Set<string>();
  /** Records that did not parse: skipped until the index file is read afresh. */
  private readonly unreadable = new Set<string>();
  private ordered: SnapshotSummary[] | undefined;
  /** The index file as far as it was read: its identity and the bytes read (up to the last whole line). */
  private file: { identity: string; read: number } | undefined;
  /** Index work (reads and appends) runs one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly path: string, private readonly records: string) {}

  /** Every snapshot, oldest first, as the records folder holds them now. */
  summaries(): Promise<SnapshotSummary[]> {
    return this.serial(async () => {
      await this.refresh();
      this.ordered ??= inCreationOrder([...this.entries.values()]);
      return this.ordered;
    });
  }

  /** A snapshot's record is durable: its line follows (or the next refresh reads the record instead). */
  added(summary: SnapshotSummary): Promise<void> {
    return this.serial(() => this.append([{ add: summary }], false)).catch(() => undefined);
  }

  /** Before a record is rewritten in place: synced, so a crash after it makes the index read that record again. */
  rewriting(id: string): Promise<void> {
    return this.serial(() => this.append([{ check: id }], true));
  }

  /** After the rewrite: the index can believe itself again for this snapshot. */
  rewritten(id: string, tags: string[]): Promise<void> {
    return this.serial(() => this.append([{ tags: { id, tags } }], false)).catch(() => undefined);
  }

  /**
   * The index written anew from the records as they are (after some were removed), so that later
   * processes do not replay the removed snapshots' lines. Atomic: a crash leaves the old file or the new.
   * A failure leaves the old one, which is still right (its refresh drops what is gone).
   */
  rewrite(): Promise<void> {
    return this.serial(async () => {
      await this.refresh();
      const lines = inCreationOrder([...this.entries.values()]).map((summary) => JSON.stringify({ add: summary }));
      await writeFileAtomic(this.path, lines.length > 0 ? `${lines.join('\n')}\n` : '');
      this.forget();
    }).catch(() => undefined);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async refresh(): Promise<void> {
    const names = (await readdir(this.records).catch(() => [] as string[]))
      .filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -5)).filter((id) => isValidId(id));
    await this.readNewLines();
    const present = new Set(names);
    for (const id of this.entries.keys()) {
      if (present.has(id)) continue;
      this.entries.delete(id);
      this.ordered = undefined;
    }
    const repairs: IndexLine[] = [];
    for (const id of names) {
      if ((this.entries.has(id) && !this.unsure.has(id)) || this.unreadable.has(id)) continue;
      const record = await this.readRecord(id);
      this.unsure.delete(id);
      if (!record) continue;
      const summary = summaryOf(record);
      this.place(summary);
      repairs.push({ add: summary });
    }
    for (const id of this.unsure) if (!present.has(id)) this.unsure.delete(id);
    // Written back so the next process need not read these records again; the lines are replayed as read.
    if (repairs.length > 0) await this.append(repairs, false).catch(() => undefined);
  }

  /**
   * A record the index lacks. One that does not parse (damaged: `verify` reports it) is skipped until the
   * index is read afresh; one gone since the directory was read is skipped; any other failure (too many
   * open files, an I/O error) is thrown, so that a list is never silently short of a snapshot.
   */
  private async readRecord(id: string): Promise<RecordLike | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.records, `${id}.json`), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const record = JSON.parse(text) as RecordLike;
      if (record.id === id && typeof record.files === 'object' && record.files !== null) return record;
    } catch {
      // Falls through: damaged.
    }
    this.unreadable.add(id);
    return undefined;
  }

  /** Lines appended since the last read (by this process or an earlier one); the whole file if it was replaced. */
  private async readNewLines(): Promise<void> {
    const handle = await open(this.path, 'r').catch(() => undefined);
    if (!handle) {
      if (this.file) this.forget();
      return;
    }
    try {
      const info = await handle.stat();
      const identity = `${info.dev}:${info.ino}`;
      if (this.file && (this.file.identity !== identity || info.size < this.file.read)) this.forget();
      const from = this.file?.read ?? 0;
      if (info.size === from) {
        this.file = { identity, read: from };
        return;
      }
      const bytes = Buffer.alloc(info.size - from);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, from);
      const text = bytes.subarray(0, bytesRead).toString('utf8');
      // An unterminated last line is an append cut short (or still under way): read again next time.
      const end = text.lastIndexOf('\n') + 1;
      for (const line of text.slice(0, end).split('\n')) if (line !== '') this.replay(line);
      this.file = { identity, read: from + Buffer.byteLength(text.slice(0, end)) };
    } finally {
      await handle.close();
    }
  }

  private replay(text: string): void {
    let line: IndexLine;
    try {
      line = JSON.parse(text) as IndexLine;
    } catch {
      return;
    }
    if ('add' in line && isValidId(line.add?.id)) {
      this.place(line.add);
      this.unsure.delete(line.add.id);
    } else if ('check' in line && isValidId(line.check)) {
      this.unsure.add(line.check);
    } else if ('tags' in line && isValidId(line.tags?.id) && Array.isArray(line.tags.tags)) {
      const entry = this.entries.get(line.tags.id);
      if (entry) this.place({ ...entry, tags: line.tags.tags });
      this.unsure.delete(line.tags.id);
    }
  }

  /**
   * Puts a summary in the index, keeping the creation order without sorting again in the usual cases:
   * a new snapshot taken on top of the newest goes at the end, a known one is replaced where it is.
   */
  private place(summary: SnapshotSummary): void {
    const known = this.entries.get(summary.id);
    this.entries.set(summary.id, summary);
    if (!this.ordered) return;
    const last = this.ordered.at(-1);
    const at = known ? this.ordered.lastIndexOf(known) : -1;
    if (at >= 0 && known!.created === summary.created && known!.parent === summary.parent) this.ordered[at] = summary;
    else if (!known && (!last || summary.created > last.created || (summary.created === last.created && summary.parent === last.id))) this.ordered.push(summary);
    else this.ordered = undefined;
  }

  private forget(): void {
    this.entries.clear();
    this.unsure.clear();
    this.unreadable.clear();
    this.ordered = undefined;
    this.file = undefined;
  }

  private async append(lines: IndexLine[], durable: boolean): Promise<void> {
    const handle = await open(this.path, 'a+');
    try {
      const { size } = await handle.stat();
      // After a torn last line, start on a line of our own so that only the torn one is lost.
      let lead = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) lead = '\n';
      }
      await handle.appendFile(`${lead}${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/**
 * Oldest first. Ids and timestamps can tie (two snapshots in one millisecond, as at a turn's start and
 * end), so ties are broken by the parent chain: a snapshot comes after the one it was taken on top of.
 */
export function inCreationOrder<T extends { id: string; created: string; parent: string | null }>(snapshots: T[]): T[] {
  const byId = new Map(snapshots.map((snapshot) => [snapshot.id, snapshot]));
  const depth = new Map<string, number>();
  const depthOf = (snapshot: T): number => {
    let hops = 0;
    const seen = new Set<string>();
    for (let at: T | undefined = snapshot; at?.parent && !seen.has(at.id); at = byId.get(at.parent)) {
      seen.add(at.id);
      const known = depth.get(at.parent);
      if (known !== undefined) { hops += known + 1; break; }
      hops++;
    }
    depth.set(snapshot.id, hops);
    return hops;
  };
  const keyed = snapshots.map((snapshot) => ({ snapshot, depth: depthOf(snapshot) }));
  // Plain comparison: timestamps and ids are ASCII of fixed shape, and a collator costs a microsecond a call.
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  keyed.sort((a, b) => compare(a.snapshot.created, b.snapshot.created) || a.depth - b.depth || compare(a.snapshot.id, b.snapshot.id));
  return keyed.map((entry) => entry.snapshot);
}
