import { isValidId, type ActionCall } from '../../core/index.js';
import type { BlockStore } from './block-store.js';

/** How far into a result the walk goes, and how many ids it looks up: a bound on its cost. */
const MAX_DEPTH = 32;
const MAX_IDS = 100_000;
const PAGE = 500;
/** An id alone, or the first segment of a data/-relative path (`<notebook>/<document>.json`). */
const LEADING_ID = /^(\d{14}-[0-9a-z]{7})(?:\/|$)/;

/**
 * Results a write made of one document's blocks alone (their ids, the document's id, fixed fields): the
 * notebook is that document's, known without walking the result or looking its block ids up (a query on
 * the reader for every block write, a cost every concurrent writer waited behind). Only for results whose
 * every field is one of those: an attribute's value, say, may name a block of another notebook.
 */
const ofOneDocument = new WeakMap<object, string>();

/** Marks `result` as naming only blocks of document `docId` (and the document itself); returns it. */
export function resultOfDocument<T extends object>(result: T, docId: string): T {
  ofOneDocument.set(result, docId);
  return result;
}

/**
 * The notebooks whose notes a result holds, from the ids in it: every note the native plugins return
 * comes with the id of its block or document (or a path under its notebook's folder), so the ids
 * (values and keys) name the notebooks. Over-counting is safe (a result is only withheld more often);
 * an id of nothing known is skipped. A result cut off by the bounds counts as every notebook (null).
 */
export function notebooksNamedIn(store: BlockStore, value: unknown): Set<string> | null {
  const docId = value !== null && typeof value === 'object' ? ofOneDocument.get(value) : undefined;
  // A document removed since is no longer in the catalog: its blocks are then looked up as any others.
  const notebook = docId === undefined ? undefined : store.catalog.doc(docId)?.notebook;
  if (notebook !== undefined) return new Set([notebook]);
  const ids = new Set<string>();
  let overflow = false;
  const visit = (node: unknown, depth: number): void => {
    if (overflow) return;
    if (typeof node === 'string') {
      const match = LEADING_ID.exec(node);
      if (match) ids.add(match[1]!);
      if (ids.size > MAX_IDS) overflow = true;
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= MAX_DEPTH) { overflow = true; return; }
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
      visit(key, depth + 1);
      visit(item, depth + 1);
    }
  };
  visit(value, 0);
  if (overflow) return null;
  const notebooks = new Set<string>();
  const blocks: string[] = [];
  for (const id of ids) {
    if (!isValidId(id)) continue;
    if (store.catalog.notebooks.has(id)) notebooks.add(id);
    else {
      const doc = store.catalog.doc(id);
      if (doc) notebooks.add(doc.notebook);
      else blocks.push(id);
    }
  }
  if (blocks.length === 0) return notebooks;
  const lookup = lookupOf(store);
  for (let start = 0; start < blocks.length; start += PAGE) {
    for (const notebook of lookup.all(JSON.stringify(blocks.slice(start, start + PAGE))) as string[]) notebooks.add(notebook);
  }
  return notebooks;
}

/** The statement mapping block ids to notebooks, prepared once per store (every blocks action asks it). */
const lookups = new WeakMap<BlockStore, ReturnType<BlockStore['index']['reader']['prepare']>>();
function lookupOf(store: BlockStore) {
  let lookup = lookups.get(store);
  if (!lookup) {
    lookup = store.index.reader.prepare('SELECT DISTINCT notebook FROM blocks WHERE id IN (SELECT value FROM json_each(?))').pluck();
    lookups.set(store, lookup);
  }
  return lookup;
}

/** Tells the call the notebooks whose notes its result holds (ActionCall.returned); past the bounds, nothing (every notebook). */
export function reportReturned(store: BlockStore, call: Pick<ActionCall, 'returned'>, value: unknown): void {
  const found = notebooksNamedIn(store, value);
  if (found) call.returned(found);
}
