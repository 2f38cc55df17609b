import { throwIfStopped, type ActionCall } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockStore } from './block-store.js';
import { cloneTree } from './index-rows.js';
import { touch, updatedBy } from './provenance.js';

export interface Change {
  root: Block;
  by: string;
  now: Date;
}

type Caller = Pick<ActionCall, 'principal' | 'callId'> & { readonly stopped?: ActionCall['stopped'] };

interface Pending {
  call: Caller;
  change: (c: Change) => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Answered already (a change refused before its batch was written). */
  settled?: boolean;
}

/** Changes waiting for their document's next write, per store and document. */
const waiting = new WeakMap<BlockStore, Map<string, Pending[]>>();

/**
 * Read, change and write one document: the change works on a copy, the document block's `updated`
 * moves on with every change, and nothing of a change that throws is written. Serialised with the
 * other writes of this document only (writes to other documents go on meanwhile). Changes that
 * arrive while the document is being written are applied together at its next write, each in order
 * on the result of the one before, with one file write and one index transaction for all of them
 * (group commit): each answers only once that write is durable, through the write journal, whose one
 * append and fdatasync serves every document written at the same time.
 */
export function mutateDocument<T>(store: BlockStore, docId: string, call: Caller, change: (c: Change) => T | Promise<T>): Promise<T> {
  let byDocument = waiting.get(store);
  if (!byDocument) waiting.set(store, (byDocument = new Map()));
  return new Promise<T>((resolve, reject) => {
    const queued = byDocument.get(docId);
    const pending: Pending = { call, change, resolve: resolve as (value: unknown) => void, reject };
    if (queued) {
      queued.push(pending);
      return;
    }
    const batch = [pending];
    byDocument.set(docId, batch);
    store.queue.runOn([docId], async () => {
      // From here on, new changes start the next batch.
      if (byDocument.get(docId) === batch) byDocument.delete(docId);
      await writeBatch(store, docId, batch);
    }).catch((error: unknown) => { for (const item of batch) settle(item, () => item.reject(error)); });
  });
}

async function writeBatch(store: BlockStore, docId: string, batch: Pending[]): Promise<void> {
  const entry = store.entry(docId);
  // Shared with the store's cache: only ever copied here, never changed.
  const base = await store.read(docId);
  // All changes on one copy; should one throw, the copy may hold part of it, so the batch is applied
  // again on a fresh copy, this time with a copy per change (one copy per batch in the usual case).
  const done = (await applyAll(batch, base, false)) ?? (await applyAll(batch.filter((item) => !item.settled), base, true))!;
  if (done.results.length === 0) return;
  try {
    await store.write(done.root, entry, { journaled: true });
  } catch (error) {
    for (const { item } of done.results) settle(item, () => item.reject(error));
    return;
  }
  for (const { item, result } of done.results) settle(item, () => item.resolve(result));
}

interface Applied {
  root: Block;
  results: { item: Pending; result: unknown }[];
}

/**
 * Applies the changes in order, each on the result of the ones before; a change that throws is
 * answered with its error and leaves nothing. With `careful`, each change works on its own copy; without,
 * all work on one, and the first change to throw ends the pass (undefined: apply again, carefully).
 */
async function applyAll(items: readonly Pending[], base: Block, careful: boolean): Promise<Applied | undefined> {
  let current = cloneTree(base);
  const results: Applied['results'] = [];
  for (const item of items) {
    // Each change's turn is a safe point: a call stopped while it waited changes nothing.
    const stopped = item.call.stopped === undefined ? undefined : stopError(item.call as Pick<ActionCall, 'stopped'>);
    if (stopped !== undefined) {
      settle(item, () => item.reject(stopped));
      continue;
    }
    const draft = careful && results.length > 0 ? cloneTree(current) : current;
    try {
      const by = updatedBy(item.call);
      const now = new Date();
      const result = await item.change({ root: draft, by, now });
      touch(draft, by, now);
      current = draft;
      results.push({ item, result });
    } catch (error) {
      settle(item, () => item.reject(error));
      if (!careful) return undefined;
      // The first change worked on the copy itself: nothing had been applied yet, so start from the base.
      if (draft === current) current = cloneTree(base);
    }
  }
  return { root: current, results };
}

function stopError(call: Pick<ActionCall, 'stopped'>): unknown {
  try {
    throwIfStopped(call, 'The write (nothing was written)');
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Answers a change once. */
function settle(item: Pending, answer: () => void): void {
  if (item.settled) return;
  item.settled = true;
  answer();
}

/** The same, for a caller already inside the write queue. */
export async function changeDocument<T>(store: BlockStore, docId: string, call: Pick<ActionCall, 'principal' | 'callId'>, change: (c: Change) => T | Promise<T>): Promise<T> {
  const entry = store.entry(docId);
  const root = await store.readForWrite(docId);
  const by = updatedBy(call);
  const now = new Date();
  const result = await change({ root, by, now });
  touch(root, by, now);
  await store.write(root, entry);
  return result;
}
