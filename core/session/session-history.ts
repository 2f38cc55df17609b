import type { BigIntStats } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KernelError } from '../errors.js';
import { syncFolder, writeFileAtomic } from '../fs/atomic-write.js';
import { describeWrite, diskFull } from '../fs/disk-full.js';
import { deepFreeze } from './json-values.js';
import type { SessionPaths } from './session-files.js';
import { applyLine, diffLine, replayJournal, type JournalLine } from './session-journal.js';
import type { SessionDocument } from './session-types.js';

/** A file as this store last saw it; another writer (a person's editor, another process) changes one of these. */
interface FileIdentity { ino: bigint; size: bigint; mtimeNs: bigint }

/** A session held in memory, with the identity of the two files it was read from or written to. */
interface Held {
  doc: SessionDocument;
  session: FileIdentity;
  sessionBytes: number;
  journal: FileIdentity | undefined;
  /** Where the journal's next line goes: after its last complete line (a torn tail is cut off first). */
  journalEnd: number;
}

/** How much is held: the most recent sessions up to this many file bytes, and at least the last one used. */
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

/** session.json as a document; one that does not parse is an error and is left as it is (a person may repair it). */
function parseSession(data: Buffer, id: string, file: string): SessionDocument {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw new KernelError('WORKSPACE_INVALID', `session ${id} is not valid JSON; it was left as it is`, { details: { file } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KernelError('WORKSPACE_INVALID', `session ${id} is not a JSON object; it was left as it is`, { details: { file } });
  const fields = value as Record<string, unknown>;
  return { ...fields, id, entries: Array.isArray(fields.entries) ? fields.entries as SessionDocument['entries'] : [], revision: typeof fields.revision === 'number' ? fields.revision : 0 };
}

/**
 * The stored history of the sessions: `session.json` and, beside it, `session.journal.jsonl`, to which
 * each save appends one line (fsynced) with what changed. The journal is folded into session.json
 * (atomically) when it would pass the size of session.json (at least 1 MiB: `limits`), and when the
 * store closes, so a save costs about the size of what it changed, and folds cost a fraction of the appends.
 * Sessions are held in memory, parsed, and used as long as both files are the ones last read or
 * written here (inode, size, mtime); another writer's change is noticed and the files read again.
 * Documents are frozen: they are shared, never copied. The caller serialises the work on one session.
 */
export class SessionHistory {
  /**
   * When the journal is folded: once it would pass `minBytes` and `shareOfSession` times the size of
   * session.json. Folding then costs a fraction of what the appends it replaces cost, however long
   * the session; tests lower both to fold often.
   */
  readonly limits = { minBytes: 2 ** 20, shareOfSession: 1 };
  private readonly held = new Map<string, Held>();
  /** Sessions whose journal holds lines: folded on close. */
  private readonly unfolded = new Set<string>();

  constructor(private readonly paths: SessionPaths) {}

  /** The session as stored, undefined when it has no session.json. */
  async current(id: string): Promise<SessionDocument | undefined> {
    return (await this.fresh(id))?.doc;
  }

  /** The session read from its files without holding it (for readers outside the session's turn). */
  async peek(id: string): Promise<SessionDocument | undefined> {
    return (await this.load(id))?.doc;
  }

  /** Stores `next` (the revision after the stored one): a line appended, or a new session.json. Returns it as held. */
  async write(id: string, next: SessionDocument): Promise<SessionDocument> {
    const held = await this.fresh(id);
    if (!held) return this.create(id, next);
    const text = `${JSON.stringify(diffLine(held.doc, next))}\n`;
    const bytes = Buffer.byteLength(text);
    // What a reload would read: the line as parsed back, not the caller's objects (which it may change).
    const doc = applyLine(held.doc, JSON.parse(text) as JournalLine);
    if (held.journalEnd + bytes > Math.max(this.limits.minBytes, held.sessionBytes * this.limits.shareOfSession)) return this.rewrite(id, held, doc);
    await this.append(id, held, text);
    held.doc = doc;
    held.journalEnd += bytes;
    return doc;
  }

  /** Writes the journal's lines into session.json and removes the journal. */
  async fold(id: string): Promise<void> {
    const held = await this.fresh(id).catch((error: unknown) => { this.unfolded.delete(id); throw error; });
    if (held?.journal === undefined) {
      this.unfolded.delete(id);
      return;
    }
    await this.rewrite(id, held, held.doc);
  }

  /** The sessions whose journal has lines not yet in session.json. */
  unfoldedSessions(): string[] {
    return [...this.unfolded];
  }

  /** Forgets what is held (the files are read again next time); `gone` when the session was deleted. */
  forget(id: string, gone = false): void {
    this.held.delete(id);
    if (gone) this.unfolded.delete(id);
  }

  private async fresh(id: string): Promise<Held | undefined> {
    const known = this.held.get(id);
    if (known) {
      const [session, journal] = await Promise.all([identityOf(this.paths.session(id)), identityOf(this.paths.journal(id))]);
      if (same(session, known.session) && same(journal, known.journal)) {
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

  private async load(id: string): Promise<Held | undefined> {
    const file = this.paths.session(id);
    const session = await readIdentified(file);
    if (!session) return undefined;
    const base = parseSession(session.data, id, file);
    const journal = await readIdentified(this.paths.journal(id));
    const replay = journal ? replayJournal(base, journal.data, this.paths.journal(id)) : { doc: deepFreeze(base), end: 0 };
    return { doc: replay.doc, session: session.identity, sessionBytes: session.data.length, journal: journal?.identity, journalEnd: replay.end };
  }

  private hold(id: string, held: Held): void {
    this.held.set(id, held);
    if (held.journal !== undefined) this.unfolded.add(id);
    let bytes = 0;
    for (const each of this.held.values()) bytes += each.sessionBytes + each.journalEnd;
    for (const [other, each] of this.held) {
      if (this.held.size <= 1 || (this.held.size <= HELD_SESSIONS && bytes <= HELD_BYTES)) break;
      this.held.delete(other);
      bytes -= each.sessionBytes + each.journalEnd;
    }
  }

  private async create(id: string, next: SessionDocument): Promise<SessionDocument> {
    // A journal left by a session deleted half-way must not be replayed onto this one.
    await rm(this.paths.journal(id), { force: true });
    const text = `${JSON.stringify(next, null, 2)}\n`;
    await writeFileAtomic(this.paths.session(id), text);
    const doc = deepFreeze(parseSession(Buffer.from(text), id, this.paths.session(id)));
    const session = await identityOf(this.paths.session(id));
    if (session) this.hold(id, { doc, session, sessionBytes: Buffer.byteLength(text), journal: undefined, journalEnd: 0 });
    return doc;
  }

  /** session.json written whole with `doc`, then the journal removed; a crash between the two leaves lines session.json already has. */
  private async rewrite(id: string, held: Held, doc: SessionDocument): Promise<SessionDocument> {
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    try {
      await writeFileAtomic(this.paths.session(id), text);
      await rm(this.paths.journal(id), { force: true });
      const session = await identityOf(this.paths.session(id));
      if (!session) throw new KernelError('NOT_FOUND', `session ${id} was removed while it was being written`);
      Object.assign(held, { doc, session, sessionBytes: Buffer.byteLength(text), journal: undefined, journalEnd: 0 });
      this.unfolded.delete(id);
      return doc;
    } catch (error) {
      this.forget(id);
      throw error;
    }
  }

  /** Appends one line and syncs it (and the folder, for a new journal): once this returns, the save survives a crash. */
  private async append(id: string, held: Held, text: string): Promise<void> {
    const path = this.paths.journal(id);
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
      throw diskFull(error, { ...describeWrite(path), note: 'the session was left as it was before this save' });
    } finally {
      await handle.close();
    }
  }
}
