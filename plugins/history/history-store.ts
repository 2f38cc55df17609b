import { readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError, NotFoundError, isValidId, writeJsonAtomic } from '../../core/index.js';
import { inlineToPlain } from '../blocks/inline-syntax.js';

export interface Version {
  /** `<time>-<op>`: sortable by time. */
  version: string;
  documentId: string;
  op: 'update' | 'move' | 'remove' | 'rollback';
  by: string;
  time: string;
  notebook: string;
  path: string;
  hpath: string;
  /** The document file's text before the change. */
  text: string;
  /** Its notebook's `access` and `egress` then (version-privacy.ts); absent in versions kept before they were recorded. */
  access?: string;
  egress?: string;
}

export type VersionInfo = Omit<Version, 'text'> & { title: string };

export interface Retention {
  /** Versions kept per document at most (the newest). */
  maxVersions: number;
  /** Versions older than this are dropped. */
  maxAgeDays: number;
}

const VERSION = /^\d{8}T\d{9}Z-(update|move|remove|rollback)(-\d+)?$/;

/** A version's description beside it (`<time>-<op>.meta.json`): a listing reads these, not the versions' texts. */
const META = '.meta.json';

/**
 * Document versions under `<workspace>/history/<doc-id>/<time>-<op>.json`, kept by the retention rules.
 * Each has its description beside it (`…meta.json`, without the text), so that listing a document's
 * versions reads a few hundred bytes each instead of every version whole (a hundred versions of a large
 * document were read and parsed twice for one listing). A version without one (written before, or a
 * crash between the two files) is read whole once and gets it.
 */
export class HistoryStore {
  constructor(readonly folder: string, private readonly retention: Retention) {}

  private documentFolder(id: string): string {
    if (!isValidId(id)) throw new KernelError('INVALID_INPUT', `'${String(id).slice(0, 40)}' is not a document id`, { details: { field: 'id' } });
    return join(this.folder, id);
  }

  async record(version: Omit<Version, 'version' | 'time'>, now: Date = new Date()): Promise<void> {
    const time = now.toISOString().replace(/[-:.]/g, '').replace('T', 'T');
    const folder = this.documentFolder(version.documentId);
    const existing = new Set(await readdir(folder).catch(() => [] as string[]));
    let name = `${time}-${version.op}`;
    for (let n = 2; existing.has(`${name}.json`); n++) name = `${time}-${version.op}-${n}`;
    const stored: Version = { ...version, version: name, time: now.toISOString() };
    await writeJsonAtomic(join(folder, `${name}.json`), stored);
    await this.describe(folder, stored);
    await this.prune(version.documentId, now);
  }

  /**
   * Writes a version's description. Not synced: a description lost in a crash is made again from the
   * version. Best effort: without it, the listing reads the version whole.
   */
  private async describe(folder: string, version: Version): Promise<VersionInfo> {
    const { text, ...info } = version;
    const described = { ...info, title: titleOf(text) };
    await writeFile(join(folder, `${version.version}${META}`), JSON.stringify(described)).catch(() => undefined);
    return described;
  }

  /** A version's description: from beside it, else from the version itself (and then written). */
  private async info(documentId: string, name: string): Promise<VersionInfo> {
    const folder = this.documentFolder(documentId);
    const text = await readFile(join(folder, `${name}${META}`), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      try {
        const info = JSON.parse(text) as VersionInfo;
        if (info.version === name && typeof info.title === 'string') return info;
      } catch {
        // Cut short or damaged: made again from the version.
      }
    }
    return this.describe(folder, await this.read(documentId, name));
  }

  /** Versions of a document, newest first. */
  async list(documentId: string): Promise<VersionInfo[]> {
    const folder = this.documentFolder(documentId);
    const names = (await readdir(folder).catch(() => [] as string[])).map((name) => name.replace(/\.json$/, '')).filter((name) => VERSION.test(name)).sort().reverse();
    const out: VersionInfo[] = [];
    for (const name of names) {
      // One damaged version file must not hide the others (history_get names it when asked for).
      const found = await this.info(documentId, name).catch((error: unknown) => {
        if (error instanceof KernelError && error.code === 'WORKSPACE_INVALID') return undefined;
        // Gone since the folder was read (pruned by a write meanwhile).
        if (error instanceof NotFoundError) return undefined;
        throw error;
      });
      if (found) out.push(found);
    }
    return out;
  }

  async read(documentId: string, version: string): Promise<Version> {
    if (!VERSION.test(version)) throw new KernelError('INVALID_INPUT', `'${version.slice(0, 60)}' is not a version`, { details: { field: 'version' } });
    const file = join(this.documentFolder(documentId), `${version}.json`);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) throw new NotFoundError('NOT_FOUND', `No version '${version}' of document '${documentId}'`, { details: { id: documentId, version } });
    try {
      return JSON.parse(text) as Version;
    } catch {
      throw new KernelError('WORKSPACE_INVALID', `version '${version}' of document '${documentId}' does not parse (${file})`, { details: { id: documentId, version } });
    }
  }

  /** Every document with versions (bounded by the folder listing). */
  async documents(): Promise<string[]> {
    return (await readdir(this.folder).catch(() => [] as string[])).filter((name) => isValidId(name)).sort();
  }

  /**
   * Removes the versions of one document or of all; `stopped` is asked before each document, and a
   * stop ends the clearing there (the documents done so far stay cleared, the rest keep their history).
   */
  async clear(documentId?: string, watch: { stopped?(): string | undefined; progress?(done: number, total: number): void } = {}): Promise<{ documents: number; of?: number; stopped?: string }> {
    const ids = documentId !== undefined ? [documentId] : await this.documents();
    for (const [i, id] of ids.entries()) {
      const stopped = watch.stopped?.();
      if (stopped !== undefined) return { documents: i, of: ids.length, stopped };
      await rm(this.documentFolder(id), { recursive: true, force: true });
      if ((i + 1) % 64 === 0) watch.progress?.(i + 1, ids.length);
    }
    return { documents: ids.length };
  }

  /**
   * Applies the retention rules to every document's versions, not only to a document written again: a
   * removed document, or one never edited since, kept every version (a deleted note's text too) for ever.
   * `stopped` is asked before each document. A document left without versions loses its folder.
   */
  async pruneAll(now: Date, stopped: () => boolean = () => false): Promise<{ documents: number; stopped: boolean }> {
    const ids = await this.documents();
    for (const [i, id] of ids.entries()) {
      if (stopped()) return { documents: i, stopped: true };
      await this.prune(id, now);
      // Only an empty folder goes (rmdir refuses one that a write filled meanwhile).
      await rmdir(this.documentFolder(id)).catch(() => undefined);
    }
    return { documents: ids.length, stopped: false };
  }

  private async prune(documentId: string, now: Date): Promise<void> {
    const folder = this.documentFolder(documentId);
    const all = await readdir(folder).catch(() => [] as string[]);
    const names = all.filter((name) => VERSION.test(name.replace(/\.json$/, ''))).sort().reverse();
    // Descriptions whose version is gone (a crash between the two removals, a listing that described a
    // version as it was pruned) go too.
    const versions = new Set(names);
    for (const name of all) if (name.endsWith(META) && !versions.has(`${name.slice(0, -META.length)}.json`)) await rm(join(folder, name), { force: true });
    const oldest = now.getTime() - this.retention.maxAgeDays * 86_400_000;
    for (const [i, name] of names.entries()) {
      const stamp = name.slice(0, 18);
      const time = Date.parse(`${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.${stamp.slice(15, 18)}Z`);
      if (i >= this.retention.maxVersions || time < oldest) {
        // The description first: a crash between the two leaves a version without one (described again
        // when listed), never a description without its version.
        await rm(join(folder, `${name.replace(/\.json$/, '')}${META}`), { force: true });
        await rm(join(folder, name), { force: true });
      }
    }
  }
}

/**
 * The words of a version a search looks in: its title and every block's content, as written and as
 * plain words. The file's JSON was searched whole: `paragraph` or `children` found every version, and
 * a quoted word (escaped there) none.
 */
export function searchableText(text: string): string {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return '';
  }
  const parts: string[] = [];
  // A stack, not recursion: a hand-edited file may nest deeper than the call stack goes.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const { content, children } = node as { content?: unknown; children?: unknown };
    if (typeof content === 'string') {
      parts.push(content);
      // Its words too, so that `bold word` finds `**bold** word`.
      const plain = inlineToPlain(content);
      if (plain !== content) parts.push(plain);
    }
    if (Array.isArray(children)) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return parts.join('\n');
}

export function titleOf(text: string): string {
  try {
    const root = JSON.parse(text) as { content?: unknown };
    return typeof root.content === 'string' ? root.content : '';
  } catch {
    return '';
  }
}
