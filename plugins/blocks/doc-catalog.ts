import { join } from 'node:path';
import { isValidId, KernelError } from '../../core/index.js';
import type { NotebookConf } from './notebook-conf.js';

/**
 * How deep documents nest at most. Each level lengthens a file's path by 23 characters: past the
 * system's limit (4,096 bytes on Linux, 1,024 on macOS) a create failed with the absolute path in its
 * error, and a move answered ok while the deepest documents it took along became unreadable.
 */
export const MAX_DOCUMENT_DEPTH = 32;

/** The refusal of a document that would be nested deeper than MAX_DOCUMENT_DEPTH. */
export function tooDeep(depth: number, field: string): KernelError {
  return new KernelError('INVALID_INPUT', `Documents nest at most ${MAX_DOCUMENT_DEPTH} deep; this would make one ${depth} deep`, { details: { field, depth, max: MAX_DOCUMENT_DEPTH } });
}

export interface DocEntry {
  id: string;
  notebook: string;
  /** The parent document, or null at the top of the notebook. */
  parent: string | null;
  title: string;
}

/**
 * Where every notebook and document is, kept in memory: paths are derived from it (notebook and parent
 * chain), never from caller input, so no name a caller gives can reach the file system.
 */
export class DocCatalog {
  readonly notebooks = new Map<string, NotebookConf>();
  private readonly docs = new Map<string, DocEntry>();
  private readonly childrenOf = new Map<string, Set<string>>();

  doc(id: string): DocEntry | undefined {
    return this.docs.get(id);
  }

  allDocs(): IterableIterator<DocEntry> {
    return this.docs.values();
  }

  get docCount(): number {
    return this.docs.size;
  }

  setDoc(entry: DocEntry): void {
    const before = this.docs.get(entry.id);
    if (before) this.childrenOf.get(parentKey(before))?.delete(entry.id);
    this.docs.set(entry.id, entry);
    let siblings = this.childrenOf.get(parentKey(entry));
    if (!siblings) this.childrenOf.set(parentKey(entry), siblings = new Set());
    siblings.add(entry.id);
  }

  deleteDoc(id: string): void {
    const before = this.docs.get(id);
    if (!before) return;
    this.childrenOf.get(parentKey(before))?.delete(id);
    this.docs.delete(id);
  }

  /** Child documents of a document, or the top-level documents of a notebook (parent null). */
  children(notebook: string, parent: string | null): DocEntry[] {
    const ids = this.childrenOf.get(parent ?? `nb:${notebook}`) ?? new Set<string>();
    return [...ids].map((id) => this.docs.get(id)!).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The document and every document below it, parents first. */
  subtree(id: string): DocEntry[] {
    const out: DocEntry[] = [];
    const root = this.docs.get(id);
    if (!root) return out;
    const stack = [root];
    // Each once: a document made its own ancestor (a file copied into its own folder) must not loop.
    const seen = new Set<string>();
    while (stack.length > 0) {
      const entry = stack.pop()!;
      if (seen.has(entry.id)) continue;
      seen.add(entry.id);
      out.push(entry);
      for (const child of this.children(entry.notebook, entry.id)) stack.push(child);
    }
    return out;
  }

  /** How deep `id` is: 1 at the top of its notebook. */
  depth(id: string): number {
    return this.ancestors(id).length + 1;
  }

  /** How many levels `id` and the documents below it take: 1 without any. */
  height(id: string): number {
    // The subtree comes parents first: each level is its parent's plus one (no spread: 150,000 overflowed it).
    const level = new Map<string, number>();
    let height = 0;
    for (const entry of this.subtree(id)) {
      const here = entry.id === id ? 1 : (level.get(entry.parent ?? '') ?? 0) + 1;
      level.set(entry.id, here);
      if (here > height) height = here;
    }
    return height;
  }

  /** Ancestor document ids, the top-level one first. */
  ancestors(id: string): string[] {
    const chain: string[] = [];
    let entry = this.docs.get(id);
    // Bounded by the number of documents, so a corrupt parent cycle cannot loop forever.
    for (let guard = 0; entry?.parent && guard <= this.docs.size; guard++) {
      chain.unshift(entry.parent);
      entry = this.docs.get(entry.parent);
    }
    return chain;
  }

  /** The file path relative to data/. */
  relativePath(id: string): string {
    const entry = this.docs.get(id)!;
    return [entry.notebook, ...this.ancestors(id), `${id}.json`].join('/');
  }

  /** The absolute file path, from validated ids only. */
  filePath(dataDir: string, id: string): string {
    return this.filePathOf(dataDir, this.docs.get(id)!);
  }

  /** The absolute file path of `entry`, which need not be in the catalog yet (its parent must be). */
  filePathOf(dataDir: string, entry: DocEntry): string {
    const parts = [entry.notebook, ...(entry.parent === null ? [] : [...this.ancestors(entry.parent), entry.parent])];
    for (const part of [...parts, entry.id]) if (!isValidId(part)) throw new Error(`refusing a path built from '${part}'`);
    return join(dataDir, ...parts, `${entry.id}.json`);
  }

  /** The file path of the child document `id` of the document whose file is at `parentFile`. */
  filePathBelow(parentFile: string, id: string): string {
    if (!isValidId(id)) throw new Error(`refusing a path built from '${id}'`);
    return join(childFolderOf(parentFile), `${id}.json`);
  }

  /** The folder holding a document's child documents. */
  childFolder(dataDir: string, id: string): string {
    return childFolderOf(this.filePath(dataDir, id));
  }

  /** The titles from the top of the notebook down to the document: `/Parent/Child`. */
  hpath(id: string): string {
    return `/${[...this.ancestors(id), id].map((doc) => this.docs.get(doc)?.title || doc).join('/')}`;
  }

  /** True when `candidate` is `id` itself or lies below it. */
  isSelfOrDescendant(candidate: string, id: string): boolean {
    return candidate === id || this.ancestors(candidate).includes(id);
  }
}

/** The folder beside a document's file that holds its child documents. */
export function childFolderOf(documentFile: string): string {
  return documentFile.replace(/\.json$/, '');
}

function parentKey(entry: DocEntry): string {
  return entry.parent ?? `nb:${entry.notebook}`;
}

