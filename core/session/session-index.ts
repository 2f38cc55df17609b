import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { isKernelError } from '../errors.js';
import { isValidId } from '../ids.js';
import type { KeyedLock } from './keyed-lock.js';
import { readJsonObject, writeJson, type SessionPaths } from './session-files.js';
import type { SessionDocument } from './session-types.js';

export interface IndexEntry { id: string; title: string; createdAt: string; updatedAt: string }

const DEFAULT_TITLE = 'AI Agent';
/** The index's lock key: not a valid session id, so it never collides with one. */
const INDEX_KEY = 'index.json';

function entryOf(id: string, session: SessionDocument): IndexEntry {
  return { id, title: typeof session.title === 'string' && session.title !== '' ? session.title : DEFAULT_TITLE, createdAt: String(session.createdAt ?? ''), updatedAt: String(session.updatedAt ?? '') };
}

/**
 * `sessions/index.json`: each session's title and times, for listing without reading every session.
 * It holds nothing the session folders do not, so one that does not parse is rebuilt from them.
 */
export class SessionIndex {
  /**
   * An index write failed: the file left is older than the sessions, and this one (rebuilt from the
   * session folders once, then kept up to date) stands for it until a write succeeds.
   */
  private inMemory: Map<string, IndexEntry> | undefined;
  private stale = false;
  /**
   * The index checked against the session folders, once a process: a save answered while the index
   * could not be written (a full disk) left its session out of the file for good (the next write
   * rewrote it without), and a missing index.json listed nothing.
   */
  private checked: Promise<void> | undefined;

  constructor(private readonly paths: SessionPaths, private readonly lock: KeyedLock, private readonly peek: (id: string) => Promise<SessionDocument | undefined>) {}

  /** Sessions newest first, `pageSize` at a time, optionally those whose title holds `title`. */
  async list(options: { page?: number; pageSize?: number; title?: string } = {}): Promise<{ total: number; sessions: IndexEntry[] }> {
    const page = Math.max(1, options.page ?? 1);
    const pageSize = Math.min(100, Math.max(1, options.pageSize ?? 30));
    const needle = options.title?.toLowerCase();
    await this.checkOnce();
    const all = [...(await this.read()).values()]
      .filter((entry) => needle === undefined || entry.title.toLowerCase().includes(needle))
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
    return { total: all.length, sessions: all.slice((page - 1) * pageSize, page * pageSize) };
  }

  async update(session: SessionDocument): Promise<void> {
    // One index for all sessions: changed under its own key so two sessions saving at once do not lose an entry.
    await this.change((index) => index.set(session.id, entryOf(session.id, session)));
  }

  async remove(id: string): Promise<void> {
    await this.change((index) => index.delete(id));
  }

  private async change(edit: (index: Map<string, IndexEntry>) => void): Promise<void> {
    await this.checkOnce();
    await this.lock.run(INDEX_KEY, async () => {
      const index = await this.read();
      edit(index);
      await this.write(index);
    }).catch((error: unknown) => {
      // Not followed (the index could not be read): the next listing checks the folders again.
      this.checked = undefined;
      throw error;
    });
  }

  private async read(): Promise<Map<string, IndexEntry>> {
    if (this.stale) return new Map(this.inMemory ??= await this.rebuild());
    // Rebuilt when damaged (no JSON object, a folder in its place); a failure to read it now (too many open
    // files) is thrown: rebuilt from a folder that could not be listed either, it held nothing.
    const value = await readJsonObject(this.paths.index, 'the session index').catch((error: unknown) => {
      if (!isKernelError(error) && (error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
      return undefined;
    });
    if (value === undefined && existsSync(this.paths.index)) return this.rebuild();
    return new Map(Object.entries(value ?? {}).filter(([, entry]) => typeof entry === 'object' && entry !== null) as [string, IndexEntry][]);
  }

  private checkOnce(): Promise<void> {
    return this.checked ??= this.lock.run(INDEX_KEY, async () => {
      const index = await this.read();
      // A folder that cannot be listed (too many open files) says nothing: the index is left as it is (read
      // as empty, it dropped every entry), and the next listing checks again.
      const listed = await readdir(this.paths.root).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : undefined));
      if (listed === undefined) { this.checked = undefined; return; }
      const folders = new Set(listed.filter((name) => isValidId(name)));
      let changed = false;
      // An entry whose folder is gone (a removal whose index write failed) goes; a folder without one is listed.
      for (const id of index.keys()) {
        if (!folders.has(id)) { index.delete(id); changed = true; }
      }
      for (const id of folders) {
        if (index.has(id)) continue;
        const session = await this.peek(id).catch(() => undefined);
        if (session) { index.set(id, entryOf(id, session)); changed = true; }
      }
      // Best effort: a write that fails keeps the index in memory (write), as for any change.
      if (changed) await this.write(index).catch(() => undefined);
    }).catch(() => {
      // Not checked (the index could not be read now): the next listing tries again.
      this.checked = undefined;
    });
  }

  private async rebuild(): Promise<Map<string, IndexEntry>> {
    const index = new Map<string, IndexEntry>();
    const names = await readdir(this.paths.root).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw error;
    });
    for (const name of names) {
      if (!isValidId(name)) continue;
      const session = await this.peek(name).catch(() => undefined);
      if (session) index.set(name, entryOf(name, session));
    }
    return index;
  }

  /** Writes the index; a failure keeps it in memory (read) until a write succeeds. */
  private async write(index: Map<string, IndexEntry>): Promise<void> {
    try {
      await writeJson(this.paths.index, Object.fromEntries(index));
    } catch (error) {
      this.stale = true;
      this.inMemory = index;
      throw error;
    }
    this.stale = false;
    this.inMemory = undefined;
  }
}
