import { ConflictError, KernelError, NotFoundError, mayRead, readableNotebooks, type ActionCall } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockStore } from './block-store.js';
import type { NotebookConf } from './notebook-conf.js';

/** Who asks: readers see published notebooks, and the agent none that a deny rule closes to it. */
export type Caller = Pick<ActionCall, 'principal'> & Partial<Pick<ActionCall, 'deniedNotebooks'>>;

/**
 * A reader sees published notebooks only, the agent none a deny rule closes to it. What they may not
 * see is answered as not found, exactly as an id that does not exist, so that they cannot even learn
 * that a private document exists.
 */
export function canSee(call: Caller, conf: NotebookConf | undefined, notebook: string): boolean {
  return mayRead(call, notebook, conf);
}

/** Whether the caller may see a notebook, by id (an unknown one is not visible). */
export function canSeeNotebook(store: BlockStore, call: Caller, notebook: string): boolean {
  return canSee(call, store.catalog.notebooks.get(notebook), notebook);
}

export function assertNotebookVisible(store: BlockStore, call: Caller, notebook: string): NotebookConf {
  const conf = store.catalog.notebooks.get(notebook);
  if (!conf || !canSee(call, conf, notebook)) throw new NotFoundError('NOT_FOUND', `No notebook with id '${notebook}'`, { details: { notebook } });
  return conf;
}

export function assertDocumentVisible(store: BlockStore, call: Caller, id: string): void {
  const entry = store.catalog.doc(id);
  if (!entry || !canSeeNotebook(store, call, entry.notebook)) {
    throw new NotFoundError('NOT_FOUND', `No document with id '${id}'`, { details: { id } });
  }
}

/**
 * The document a block lives in (by the index), checked against what the caller may see. One answer
 * for a block that does not exist and one the caller may not see, naming only the id asked for: the
 * document around it would tell that the block exists, and where.
 */
export function documentOfBlock(store: BlockStore, call: Caller, blockId: string): string {
  const docId = store.catalog.doc(blockId) ? blockId : store.index.placeOf(blockId)?.root_id;
  const entry = docId === undefined ? undefined : store.catalog.doc(docId);
  if (!docId || !entry || !canSeeNotebook(store, call, entry.notebook)) {
    throw new NotFoundError('NOT_FOUND', `No block with id '${blockId}'`, { details: { id: blockId } });
  }
  return docId;
}

/**
 * An index sync's counts within the notebooks the caller may read: the whole workspace's told the agent
 * (or a reader, an MCP client) that a notebook hidden from it exists, and how large it is.
 */
export function scopedCounts(store: BlockStore, call: Caller, removedIn: Readonly<Record<string, number>>): { notebooks: number; documents: number; indexed: number; blocks: number; removed: number } {
  const notebooks = readableNotebooks(call, store.catalog.notebooks);
  const inThem = JSON.stringify(notebooks);
  const documents = store.index.reader.prepare("SELECT count(*) FROM blocks WHERE type = 'document' AND notebook IN (SELECT value FROM json_each(?))").pluck().get(inThem) as number;
  const blocks = store.index.reader.prepare('SELECT count(*) FROM blocks WHERE notebook IN (SELECT value FROM json_each(?))').pluck().get(inThem) as number;
  // A rebuild writes every document again: those it could not are listed in its problems, not counted.
  return { notebooks: notebooks.length, documents, indexed: documents, blocks, removed: notebooks.reduce((sum, id) => sum + (removedIn[id] ?? 0), 0) };
}

/**
 * Whether a broken file's problem may be listed to the caller: readers, in the notebooks they may read;
 * the agent, in none a deny rule closes to it; administrators, all (also folders that are no notebook).
 */
export function mayListProblem(store: BlockStore, call: Caller, path: string): boolean {
  const notebook = path.split('/')[0] ?? '';
  if (call.deniedNotebooks?.has(notebook)) return false;
  return call.principal.role !== 'reader' || canSeeNotebook(store, call, notebook);
}

/** The other document of a block found twice, for administrators, unless it lies where the caller may not look. */
export function otherDocumentShown(store: BlockStore, call: Caller, other: string | undefined): string | undefined {
  if (other === undefined || call.principal.role !== 'admin') return undefined;
  const notebook = store.catalog.doc(other)?.notebook;
  return notebook !== undefined && call.deniedNotebooks?.has(notebook) ? undefined : other;
}

/** The optimistic check of DESIGN.md §3: a stale expected `updated` is a conflict, never an overwrite. */
export function checkExpected(block: Block, expected: string | undefined): void {
  if (expected === undefined || block.attrs.updated === expected) return;
  throw new ConflictError('CONFLICT', `Block '${block.id}' was changed since ${expected} (now updated ${block.attrs.updated ?? 'never'}); read it again and retry`,
    { details: { id: block.id, expected, actual: block.attrs.updated ?? null } });
}

/**
 * Removing a folder would delete files the index skipped as broken; those are never deleted by the
 * kernel, so the person repairs or removes them by hand first.
 */
export function assertNoBrokenFiles(store: BlockStore, prefixes: string[]): void {
  const broken = [...store.problems.keys()].filter((path) => prefixes.some((prefix) => path === prefix || path.startsWith(prefix)));
  if (broken.length === 0) return;
  throw new ConflictError('CONFLICT', `This would delete files that are not valid documents (${broken.slice(0, 3).join(', ')}${broken.length > 3 ? ', …' : ''}); repair or remove them by hand first`,
    { details: { files: broken.slice(0, 20) } });
}

export function invalid(message: string, details: Record<string, unknown> = {}): KernelError {
  return new KernelError('INVALID_INPUT', message, { details });
}
