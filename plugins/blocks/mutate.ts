import type { ActionCall } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockStore } from './block-store.js';
import { touch, updatedBy } from './provenance.js';

export interface Change {
  root: Block;
  by: string;
  now: Date;
}

/**
 * Read, change and write one document inside the write queue: the change works on a copy, the
 * document block's `updated` moves on with every change, and nothing is written if the change throws.
 */
export function mutateDocument<T>(store: BlockStore, docId: string, call: Pick<ActionCall, 'principal' | 'callId'>, change: (c: Change) => T | Promise<T>): Promise<T> {
  return store.queue.run(() => changeDocument(store, docId, call, change), 'stopped' in call ? call as Pick<ActionCall, 'stopped'> : undefined);
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
