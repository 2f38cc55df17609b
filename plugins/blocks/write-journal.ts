import { crc32 } from 'node:zlib';
import { statSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { diskFull, isValidId, writeFileAtomic, type Logger } from '../../core/index.js';

/** A segment is checkpointed once it holds this much, or this long after its first record. */
const SEGMENT_LIMIT_BYTES = 32 * 2 ** 20;
const CHECKPOINT_AFTER_MS = 1_000;
const SEGMENT = /^writes-(\d{8})\.log$/;
const NEWLINE = Buffer.from('\n');

interface Waiter {
  buffers: Buffer[];
  resolve(): void;
  reject(error: unknown): void;
}

/** One journal file: records appended (group commit), the documents they name, file writes under way. */
interface Segment {
  name: string;
  handle: Promise<FileHandle>;
  /** Bytes of whole records: where the file is cut back to after a failed append. */
  size: number;
  paths: Set<string>;
  queue: Waiter[];
  flushing: Promise<void> | undefined;
  /** Records appended whose document file is not written yet; the checkpoint waits for none. */
  inFlight: number;
  drained: (() => void)[];
}

/**
 * Group commit for document writes (DESIGN: files are the truth, written whole). A document write is
 * made durable by appending the document's new bytes to this journal, one append and one fdatasync for
 * every document written at the same time, whatever their number; the document file is then replaced
 * (temporary file, rename) without an fsync of its own. A checkpoint, a second after the first record
 * or once a segment is large, fsyncs the files written since and their folders and then removes the
 * segment. After a crash of the machine, the next start writes the newest recorded bytes of each
 * document (durably) before anything reads data/; after a crash of the process alone, the files are
 * already whole. Every other writer of data/ (structural changes, snapshots, syncs, hand edits seen by
 * the watcher) runs after a checkpoint, so a replay never puts back an older state over theirs.
 */
export class WriteJournal {
  private current: Segment | undefined;
  /** Segments no longer appended to (a checkpoint started, or an append failed), not yet checkpointed. */
  private retired: Segment[] = [];
  private number = 0;
  /**
   * Per document, the file as this journal last left it (see record): a file that is no longer so was
   * changed from outside, and its state is made durable before a record is taken over it.
   */
  private readonly leftAs = new Map<string, string>();
  private checkpoints: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  private constructor(readonly dir: string, private readonly dataDir: string, private readonly log: Logger) {}

  /** Opens the journal of `dataDir`, first writing back what a crash left in it; returns the paths written. */
  static async open(dir: string, dataDir: string, log: Logger): Promise<{ journal: WriteJournal; replayed: string[] }> {
    const numbers = (await readdir(dir).catch(() => [] as string[])).map((name) => Number(SEGMENT.exec(name)?.[1] ?? 0));
    const replayed = await replay(dir, dataDir, log);
    const journal = new WriteJournal(dir, dataDir, log);
    journal.number = Math.max(0, ...numbers);
    return { journal, replayed };
  }

  /**
   * Records `bytes` as the new content of the data/-relative `path`, durably, then calls `writeFile`
   * (which replaces the file without an fsync). Resolves once both are done. If the file cannot be
   * written, a checkpoint removes the record before the error is thrown, so no replay applies it.
   */
  async record(path: string, bytes: Buffer, writeFile: () => unknown): Promise<void> {
    const file = join(this.dataDir, ...path.split('/'));
    // The file as it is before this write (see changedWhileDown): a crash may leave it so, but only if
    // that state is on disk. The kernel's own states are (synced, or recorded in a segment not yet
    // checkpointed); one made from outside (an editor, a sync tool) may not be, so it is synced first:
    // else a crash could take the file back past it, and the replay would take that for a change.
    const before = statSync(file, { throwIfNoEntry: false });
    const was: FileIdentity | null = before ? { s: before.size, m: before.mtimeMs, c: before.ctimeMs, i: before.ino } : null;
    if (was && this.leftAs.get(path) !== identityKey(was)) {
      await syncFile(file);
      await syncFolder(dirname(file));
    }
    const segment = this.segment();
    const header = Buffer.from(`${JSON.stringify({ p: path, n: bytes.length, c: crc32(bytes, crc32(path)), o: was })}\n`);
    segment.paths.add(path);
    segment.inFlight++;
    let failed: unknown;
    try {
      await this.append(segment, [header, bytes, NEWLINE]);
      await writeFile();
      const after = statSync(file, { throwIfNoEntry: false });
      if (after) this.leftAs.set(path, identityKey({ s: after.size, m: after.mtimeMs, c: after.ctimeMs, i: after.ino }));
    } catch (error) {
      failed = error;
    }
    done(segment);
    if (failed !== undefined) {
      // The record may be durable while the file was not written: it must never be replayed.
      await this.checkpoint().catch(() => undefined);
      throw diskFull(failed, { what: 'document', file: `data/${path}`, note: 'through the write journal; the document is as it was' });
    }
    if (segment.size >= SEGMENT_LIMIT_BYTES) void this.checkpoint().catch(() => undefined);
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.checkpoint().catch(() => undefined), CHECKPOINT_AFTER_MS);
      this.timer.unref();
    }
  }

  /**
   * Makes every file recorded so far durable on its own and removes the segments that recorded them.
   * Serialised; records made meanwhile go to a new segment.
   */
  checkpoint(): Promise<void> {
    const next = this.checkpoints.then(() => this.checkpointNow());
    this.checkpoints = next.catch(() => undefined);
    return next;
  }

  /** Checkpoints; the journal is then empty. */
  async close(): Promise<void> {
    await this.checkpoint();
  }

  private segment(): Segment {
    if (this.current) return this.current;
    const name = `writes-${String(++this.number).padStart(8, '0')}.log`;
    const handle = (async () => {
      const file = await openCreating(join(this.dir, name), this.dir);
      // The new file's name must be durable before its first record is acknowledged.
      await syncFolder(this.dir);
      return file;
    })();
    handle.catch(() => undefined);
    this.current = { name, handle, size: 0, paths: new Set(), queue: [], flushing: undefined, inFlight: 0, drained: [] };
    return this.current;
  }

  private append(segment: Segment, buffers: Buffer[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      segment.queue.push({ buffers, resolve, reject });
      segment.flushing ??= this.flush(segment);
    });
  }

  /** Writes what is queued, one writev and one fdatasync for all of it, until nothing is queued. */
  private async flush(segment: Segment): Promise<void> {
    while (segment.queue.length > 0) {
      const batch = segment.queue.splice(0);
      const buffers = batch.flatMap((waiter) => waiter.buffers);
      const length = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
      try {
        const file = await segment.handle;
        let written = (await file.writev(buffers, segment.size)).bytesWritten;
        // A short write (the disk filled part way): the rest is written again, which fails with the reason
        // (ENOSPC, answered as DISK_FULL) rather than an unexplained count.
        for (let rest = written < length ? Buffer.concat(buffers).subarray(written) : undefined; rest !== undefined && rest.length > 0;) {
          const { bytesWritten } = await file.write(rest, 0, rest.length, segment.size + written);
          if (bytesWritten === 0) throw Object.assign(new Error(`the write journal took ${written} of ${length} bytes`), { code: 'ENOSPC' });
          written += bytesWritten;
          rest = rest.subarray(bytesWritten);
        }
        await file.datasync();
        segment.size += length;
        for (const waiter of batch) waiter.resolve();
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
        // Later records must not follow a torn one: cut it off, and append to a new segment from now on.
        await segment.handle.then((file) => file.truncate(segment.size)).catch(() => undefined);
        this.retire(segment);
      }
    }
    segment.flushing = undefined;
  }

  private retire(segment: Segment): void {
    if (this.current === segment) this.current = undefined;
    if (!this.retired.includes(segment)) this.retired.push(segment);
  }

  private async checkpointNow(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.current) this.retire(this.current);
    const segments = this.retired.splice(0);
    try {
      for (const segment of segments) {
        while (segment.flushing) await segment.flushing;
        if (segment.inFlight > 0) await new Promise<void>((resolve) => segment.drained.push(resolve));
      }
      const paths = new Set(segments.flatMap((segment) => [...segment.paths].map((path) => join(this.dataDir, ...path.split('/')))));
      for (const path of paths) await syncFile(path);
      for (const folder of new Set([...paths].map((path) => dirname(path)))) await syncFolder(folder).catch(ignoreMissing);
      for (const segment of segments) {
        await segment.handle.then((file) => file.close()).catch(() => undefined);
        await rm(join(this.dir, segment.name), { force: true });
      }
      if (segments.length > 0) await syncFolder(this.dir);
    } catch (error) {
      // Tried again at the next checkpoint; until then the segments stay and would be replayed.
      this.retired.unshift(...segments);
      this.log.error('a checkpoint of the write journal failed; it is tried again', { error: (error as Error).message });
      throw error;
    }
  }
}

function done(segment: Segment): void {
  if (segment.inFlight === 0) return;
  segment.inFlight--;
  if (segment.inFlight === 0) for (const resolve of segment.drained.splice(0)) resolve();
}

async function openCreating(file: string, folder: string): Promise<FileHandle> {
  try {
    return await open(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(folder, { recursive: true });
    return open(file, 'wx', 0o600);
  }
}

async function syncFile(path: string): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    return ignoreMissing(error);
  }
  try {
    await file.sync();
  } finally {
    await file.close();
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}

/** A data/-relative document path as the journal records it: ids only, so a damaged record cannot point elsewhere. */
export function isDocumentPath(path: string): boolean {
  const parts = path.split('/');
  const file = parts.pop() ?? '';
  return file.endsWith('.json') && [...parts, file.slice(0, -5)].every((part) => isValidId(part));
}

/**
 * Writes back, durably, the newest recorded bytes of each document found in the journal's segments,
 * then removes them. A segment ends at its first record that is not whole (an append cut short, never
 * acknowledged). A document whose folder is gone, or whose file was changed while the kernel was down
 * (see changedWhileDown), is left alone (said in the log; the latter's text kept aside).
 */
async function replay(dir: string, dataDir: string, log: Logger): Promise<string[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => SEGMENT.test(name)).sort();
  if (names.length === 0) return [];
  const newest = new Map<string, Buffer>();
  /** Per path, every version recorded and the file as it was before each record. */
  const recorded = new Map<string, Recorded>();
  for (const name of names) {
    const text = await readFile(join(dir, name));
    let at = 0;
    while (at < text.length) {
      const end = text.indexOf(0x0a, at);
      const header = end === -1 ? undefined : parseHeader(text.subarray(at, end).toString('utf8'));
      const bytes = header && end + 1 + header.n + 1 <= text.length ? text.subarray(end + 1, end + 1 + header.n) : undefined;
      if (!header || !bytes || crc32(bytes, crc32(header.p)) !== header.c || !isDocumentPath(header.p)) {
        log.warn('the write journal ends with a record that is not whole (an append cut short, never acknowledged); the rest of it is ignored', { segment: name, offset: at });
        break;
      }
      newest.set(header.p, Buffer.from(bytes));
      const known = recorded.get(header.p) ?? { versions: [], before: [] };
      known.versions.push(newest.get(header.p)!);
      // A record written before identities were kept says nothing of the file before it: any file goes.
      known.before.push(header.o === undefined ? 'unknown' : header.o);
      recorded.set(header.p, known);
      at = end + 1 + header.n + 1;
    }
  }
  const written: string[] = [];
  for (const [path, bytes] of newest) {
    const file = join(dataDir, ...path.split('/'));
    if (!(await stat(dirname(file)).then((info) => info.isDirectory(), () => false))) {
      log.warn('a document in the write journal has no folder any more; not written back', { path });
      continue;
    }
    if (await changedWhileDown(file, recorded.get(path)!)) {
      const kept = await keepAside(dir, path, bytes);
      log.warn('a document in the write journal was changed, moved or removed after the kernel last wrote it (by hand or a sync tool, while the kernel was down): that change stands; the journal\'s text is kept aside', { path, kept });
      continue;
    }
    await writeFileAtomic(file, bytes);
    written.push(path);
  }
  for (const name of names) await rm(join(dir, name), { force: true });
  await syncFolder(dir);
  if (written.length > 0) log.warn('wrote back documents from the write journal (the machine stopped before their files were synced)', { documents: written.length });
  return written;
}

/**
 * A file as `stat` saw it: size, modification and change times, inode. The change time cannot be set
 * from user space (a restore that keeps the old mtime, into a reused inode number, still differs).
 */
interface FileIdentity { s: number; m: number; c: number; i: number }

function identityKey(identity: FileIdentity): string {
  return `${identity.s}:${identity.m}:${identity.c}:${identity.i}`;
}

interface Recorded {
  /** Every version of the document the journal holds, oldest first. */
  versions: Buffer[];
  /** The file before each record: none (a new document), as stat saw it, or unknown (an older journal). */
  before: (FileIdentity | null | 'unknown')[];
}

/**
 * Whether the document's file shows a change made while the kernel was down, to be left standing. A
 * crash of the machine leaves the file in one of the states the journal knows: as it was before one of
 * the records (same size, time and inode: the rename never reached the disk), one of the recorded
 * versions, or torn (not a document). Anything else (another whole document, or no file where one was)
 * was made after: by hand or by a sync tool. No clock is compared: one set back would pass an old file
 * for a new one. Without this, a kill within a second of a write, then an edit before the restart, lost
 * the edit.
 */
async function changedWhileDown(file: string, recorded: Recorded): Promise<boolean> {
  if (recorded.before.includes('unknown')) return false;
  const info = await stat(file).catch(() => undefined);
  // No file: it was there before each record (none made it), so someone removed or moved it since.
  if (!info) return !recorded.before.includes(null);
  if (recorded.before.some((was) => was !== null && was !== 'unknown' && was.s === info.size && was.m === info.mtimeMs && was.c === info.ctimeMs && was.i === info.ino)) return false;
  const current = await readFile(file).catch(() => undefined);
  if (current === undefined || recorded.versions.some((version) => version.equals(current))) return false;
  try {
    const value = JSON.parse(current.toString('utf8')) as { id?: unknown };
    return typeof value?.id === 'string';
  } catch {
    return false;
  }
}

/** The journal's newest text of a document it does not write back, kept under `<journal>/kept/` (named in the log). */
async function keepAside(dir: string, path: string, bytes: Buffer): Promise<string> {
  const file = join(dir, 'kept', `${new Date().toISOString().replace(/[-:.]/g, '')}-${path.split('/').join('_')}`);
  await writeFileAtomic(file, bytes);
  return file;
}

function parseHeader(line: string): { p: string; n: number; c: number; o?: FileIdentity | null } | undefined {
  try {
    const value = JSON.parse(line) as { p?: unknown; n?: unknown; c?: unknown; o?: unknown };
    const identity = value.o === undefined || value.o === null || (typeof value.o === 'object' && ['s', 'm', 'c', 'i'].every((key) => typeof (value.o as Record<string, unknown>)[key] === 'number'));
    if (typeof value.p === 'string' && Number.isInteger(value.n) && (value.n as number) >= 0 && Number.isInteger(value.c) && identity) return value as { p: string; n: number; c: number; o?: FileIdentity | null };
  } catch {
    // not a header: the record is torn
  }
  return undefined;
}
