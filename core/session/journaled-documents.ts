import type { BigIntStats } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KernelError } from '../errors.js';
import { syncFolder, writeFileAtomic } from '../fs/atomic-write.js';
import { describeWrite, diskFull } from '../fs/disk-full.js';
import { deepFreeze } from './json-values.js';
import { applyLine, diffLine, replayJournal, type JournalDocument, type JournalLine } from './session-journal.js';

/** A file as this store last saw it; another writer (a person's editor, another process) changes one of these. */
interface FileIdentity { ino: bigint; size: bigint; mtimeNs: bigint }

/** A document held in memory, with the identity of the two files it was read from or written to. */
interface Held<D> {
  doc: D;
  whole: FileIdentity;
  wholeBytes: number;
  journal: FileIdentity | undefined;
  /** Where the journal's next line goes: after its last complete line (a torn tail is cut off first). */
  journalEnd: number;
}

/** How much is held: the most recent documents up to this many file bytes, and at least the last one used. */
const HELD_BYTES = 64 * 2 ** 20;
const HELD_SESSIONS = 32;

const identity = (stats: BigIntStats): FileIdentity => ({ ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs });

function isAbsent(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

async function identityOf(path: string): Promise<FileIdentity | undefined> {
  try {
    return identity(await stat(path, { bigint: true }));
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
}

function same(a: FileIdentity | undefined, b: FileIdentity | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** A file's bytes with the identity taken before reading them: a change after that is always noticed later. */
async function readIdentified(path: string): Promise<{ data: Buffer; identity: FileIdentity } | undefined> {
  const handle = await open(path, 'r').catch((error: unknown) => { if (isAbsent(error)) return undefined; throw error; });
  if (!handle) return undefined;
  try {
    const before = identity(await handle.stat({ bigint: true }));
    return { data: await handle.readFile(), identity: before };
  } finally {
    await handle.close();
  }
}

/**
 * Where one kind of document lives and how its whole file reads and is written: a session's history
 * (session.json), the turn being produced (runtime.json). The journal beside it holds the saves since.
 */
export interface JournaledKind<D extends JournalDocument> {
  /** The whole file of document `id`, and its name in messages ('session.json'). */
  whole(id: string): string;
  readonly wholeName: string;
  journal(id: string): string;
  /** The whole file's bytes as a document; one that does not parse is an error and is left as it is (a person may repair it). */
  parse(data: Buffer, id: string, file: string): D;
  /** What the whole file holds for `doc`. */
  toFile(doc: D): unknown;
}

/**
 * Documents kept as a whole file (`session.json`) and, beside it, a journal (`session.journal.jsonl`)
 * to which each save appends one line (fsynced) with what changed. The journal is folded into the whole
 * file (atomically) when it would pass the size of that file (at least 1 MiB: `limits`), and when the
 * store closes, so a save costs about the size of what it changed, and folds cost a fraction of the appends.
 * Documents are held in memory, parsed, and used as long as both files are the ones last read or
 * written here (inode, size, mtime); another writer's change is noticed and the files read again.
 * Documents are frozen: they are shared, never copied. The caller serialises the work on one document.
 */
export class JournaledDocuments<D extends JournalDocument> {
  /**
   * When the journal is folded: once it would pass `minBytes` and `shareOfSession` times the size of
   * the whole file. Folding then costs a fraction of what the appends it replaces cost, however long
   * the session; tests lower both to fold often.
   */
  readonly limits = { minBytes: 2 ** 20, shareOfSession: 1 };
  private readonly held = new Map<string, Held<D>>();
  /** Documents whose journal holds lines: folded on close. */
  private readonly unfolded = new Set<string>();

  constructor(private readonly kind: JournaledKind<D>) {}

  /** The document as stored, undefined when it has no whole file. */
  async current(id: string): Promise<D | undefined> {
    return (await this.fresh(id))?.doc;
  }

  /** The document read from its files without holding it (for readers outside the session's turn). */
  async peek(id: string): Promise<D | undefined> {
    return (await this.load(id))?.doc;
  }

  /** Stores `next` (the revision after the stored one): a line appended, or a new whole file. Returns it as held. */
  async write(id: string, next: D | ((stored: D | undefined) => D)): Promise<D> {
    const held = await this.fresh(id);
    // Made from the stored document here when a function: the caller needs not read it first (its files stated twice).
    if (typeof next === 'function') next = next(held?.doc);
    if (!held) return this.create(id, next);
    // A line that skipped a revision would make the journal unreadable (replayJournal): refused before it is written.
    if (next.revision !== held.doc.revision + 1) throw new KernelError('INTERNAL', `${this.kind.wholeName} of ${id} is at revision ${held.doc.revision}; revision ${next.revision} cannot follow it`);
    const text = `${JSON.stringify(diffLine(held.doc, next))}\n`;
    const bytes = Buffer.byteLength(text);
    // What a reload would read: the line as parsed back, not the caller's objects (which it may change),
    // but for those the caller froze (applyLine).
    const doc = applyLine(held.doc, JSON.parse(text) as JournalLine, next.entries);
    if (held.journalEnd + bytes > Math.max(this.limits.minBytes, held.wholeBytes * this.limits.shareOfSession)) return this.rewrite(id, held, doc);
    await this.append(id, held, text);
    held.doc = doc;
    held.journalEnd += bytes;
    return doc;
  }

  /** Writes the journal's lines into the whole file and removes the journal. */
  async fold(id: string): Promise<void> {
    const held = await this.fresh(id).catch((error: unknown) => { this.unfolded.delete(id); throw error; });
    if (held?.journal === undefined) {
      this.unfolded.delete(id);
      return;
    }
    await this.rewrite(id, held, held.doc);
  }

  /** The documents whose journal has lines not yet in the whole file. */
  unfoldedIds(): string[] {
    return [...this.unfolded];
  }

  /** Forgets what is held (the files are read again next time); `gone` when the document was deleted. */
  forget(id: string, gone = false): void {
    this.held.delete(id);
    if (gone) this.unfolded.delete(id);
  }

  private async fresh(id: string): Promise<Held<D> | undefined> {
    const known = this.held.get(id);
    if (known) {
      const [whole, journal] = await Promise.all([identityOf(this.kind.whole(id)), identityOf(this.kind.journal(id))]);
      if (same(whole, known.whole) && same(journal, known.journal)) {
        this.held.delete(id);
        this.held.set(id, known);
        return known;
      }
    }
    this.held.delete(id);
    const loaded = await this.load(id);
    if (loaded) this.hold(id, loaded);
    return loaded;
  }

  private async load(id: string): Promise<Held<D> | undefined> {
    const file = this.kind.whole(id);
    const whole = await readIdentified(file);
    if (!whole) return undefined;
    const base = this.kind.parse(whole.data, id, file);
    const journal = await readIdentified(this.kind.journal(id));
    const replay = journal ? replayJournal(base, journal.data, this.kind.journal(id), this.kind.wholeName) : { doc: deepFreeze(base), end: 0 };
    return { doc: replay.doc, whole: whole.identity, wholeBytes: whole.data.length, journal: journal?.identity, journalEnd: replay.end };
  }

  private hold(id: string, held: Held<D>): void {
    this.held.set(id, held);
    if (held.journal !== undefined) this.unfolded.add(id);
    let bytes = 0;
    for (const each of this.held.values()) bytes += each.wholeBytes + each.journalEnd;
    for (const [other, each] of this.held) {
      if (this.held.size <= 1 || (this.held.size <= HELD_SESSIONS && bytes <= HELD_BYTES)) break;
      this.held.delete(other);
      bytes -= each.wholeBytes + each.journalEnd;
    }
  }

  private async create(id: string, next: D): Promise<D> {
    // A journal left by a document deleted half-way must not be replayed onto this one.
    await rm(this.kind.journal(id), { force: true });
    const text = `${JSON.stringify(this.kind.toFile(next), null, 2)}\n`;
    await writeFileAtomic(this.kind.whole(id), text);
    const doc = deepFreeze(this.kind.parse(Buffer.from(text), id, this.kind.whole(id)));
    const whole = await identityOf(this.kind.whole(id));
    if (whole) this.hold(id, { doc, whole, wholeBytes: Buffer.byteLength(text), journal: undefined, journalEnd: 0 });
    return doc;
  }

  /** The whole file written with `doc`, then the journal removed; a crash between the two leaves lines the whole file already has. */
  private async rewrite(id: string, held: Held<D>, doc: D): Promise<D> {
    const text = `${JSON.stringify(this.kind.toFile(doc), null, 2)}\n`;
    try {
      await writeFileAtomic(this.kind.whole(id), text);
      await rm(this.kind.journal(id), { force: true });
      const whole = await identityOf(this.kind.whole(id));
      if (!whole) throw new KernelError('NOT_FOUND', `${this.kind.wholeName} of ${id} was removed while it was being written`);
      Object.assign(held, { doc, whole, wholeBytes: Buffer.byteLength(text), journal: undefined, journalEnd: 0 });
      this.unfolded.delete(id);
      return doc;
    } catch (error) {
      this.forget(id);
      throw error;
    }
  }

  /** Appends one line and syncs it (and the folder, for a new journal): once this returns, the save survives a crash. */
  private async append(id: string, held: Held<D>, text: string): Promise<void> {
    const path = this.kind.journal(id);
    const handle = await open(path, 'a').catch((error: unknown) => { throw diskFull(error, describeWrite(path)); });
    try {
      // A line a crash cut short is cut off, or the next line would be glued to it.
      if (held.journal !== undefined && held.journal.size !== BigInt(held.journalEnd)) await handle.truncate(held.journalEnd);
      await handle.writeFile(text);
      await handle.datasync();
      if (held.journal === undefined) await syncFolder(dirname(path));
      held.journal = identity(await handle.stat({ bigint: true }));
      this.unfolded.add(id);
    } catch (error) {
      // Cut back to where the journal was, so a half-written line is not followed by the next one.
      await handle.truncate(held.journalEnd).catch(() => undefined);
      this.forget(id);
      throw diskFull(error, { ...describeWrite(path), note: `${this.kind.wholeName} and its journal were left as they were before this save` });
    } finally {
      await handle.close();
    }
  }
}
