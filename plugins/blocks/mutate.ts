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
}

/** Changes waiting for their document's next write, per store and document. */
const waiting = new WeakMap<BlockStore, Map<string, Pending[]>>();

/**
 * Read, change and write one document: the change works on a copy, the document block's `updated`
 * moves on with every change, and nothing of a change that throws is written. Serialised with the
 * other writes of this document only (writes to other documents go on meanwhile). Changes that
 * arrive while the document is being written are applied together at its next write, each in order
 * on the result of the one before, with one file write and one index transaction for all of them
 * (group commit): each answers only once that write is durable.
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
    }).catch((error: unknown) => { for (const item of batch) item.reject(error); });
  });
}

async function writeBatch(store: BlockStore, docId: string, batch: Pending[]): Promise<void> {
  const entry = store.entry(docId);
  let current = await store.readForWrite(docId);
  const done: { item: Pending; result: unknown }[] = [];
  for (const item of batch) {
    try {
      // Each change's turn is a safe point: a call stopped while it waited changes nothing.
      if (item.call.stopped !== undefined) throwIfStopped(item.call as Pick<ActionCall, 'stopped'>, 'The write (nothing was written)');
      const draft = batch.length === 1 ? current : cloneTree(current);
      const by = updatedBy(item.call);
      const now = new Date();
      const result = await item.change({ root: draft, by, now });
      touch(draft, by, now);
      current = draft;
      done.push({ item, result });
    } catch (error) {
      item.reject(error);
    }
  }
  if (done.length === 0) return;
  try {
    await store.write(current, entry);
  } catch (error) {
    for (const { item } of done) item.reject(error);
    return;
  }
  for (const { item, result } of done) item.resolve(result);
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
