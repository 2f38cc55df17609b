import { ConflictError, KernelError, NotFoundError, type ActionCall } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockStore } from './block-store.js';
import type { NotebookConf } from './notebook-conf.js';

/**
 * A reader sees published notebooks only. What they may not see is answered as not found, so that
 * a reader cannot even learn that a private document exists.
 */
export function canSee(call: Pick<ActionCall, 'principal'>, conf: NotebookConf | undefined): boolean {
  if (!conf) return false;
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

export function invalid(message: string, details: Record<string, unknown> = {}): KernelError {
  return new KernelError('INVALID_INPUT', message, { details });
}
