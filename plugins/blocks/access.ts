import { ConflictError, KernelError, NotFoundError, type ActionCall } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockStore } from './block-store.js';
import type { NotebookConf } from './notebook-conf.js';

/**
 * A reader sees published notebooks only. What they may not see is answered as not found, so that
 * a reader cannot even learn that a private document exists.
 */
export function canSee(call: Pick<ActionCall, 'principal'> & Partial<Pick<ActionCall, 'deniedNotebooks'>>, conf: NotebookConf | undefined, notebook?: string): boolean {
  if (!conf) return false;
  if (notebook !== undefined && call.deniedNotebooks?.has(notebook)) return false;
  return call.principal.role !== 'reader' || conf.access === 'published';
}

export function assertNotebookVisible(store: BlockStore, call: Pick<ActionCall, 'principal'>, notebook: string): NotebookConf {
  const conf = store.catalog.notebooks.get(notebook);
  if (!conf || !canSee(call, conf)) throw new NotFoundError('NOT_FOUND', `No notebook with id '${notebook}'`, { details: { notebook } });
  return conf;
}

export function assertDocumentVisible(store: BlockStore, call: Pick<ActionCall, 'principal'>, id: string): void {
  const entry = store.catalog.doc(id);
  if (!entry || !canSee(call, store.catalog.notebooks.get(entry.notebook))) {
    throw new NotFoundError('NOT_FOUND', `No document with id '${id}'`, { details: { id } });
  }
}

/** The document a block lives in (by the index), checked against what the caller may see. */
export function documentOfBlock(store: BlockStore, call: Pick<ActionCall, 'principal'>, blockId: string): string {
  const docId = store.catalog.doc(blockId) ? blockId : store.index.placeOf(blockId)?.root_id;
  if (!docId || !store.catalog.doc(docId)) throw new NotFoundError('NOT_FOUND', `No block with id '${blockId}'`, { details: { id: blockId } });
  assertDocumentVisible(store, call, docId);
  return docId;
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
