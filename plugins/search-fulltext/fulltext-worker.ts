/**
 * A full-text query worker (fulltext-search.ts): one read-only connection to the blocks index, opened
 * as the main thread's reader is, running one query at a time. A query that reads a cold index from
 * disk takes as long as the disk does (seconds at a million blocks), and only this thread waits.
 * Messages: { id, request } → { id, answer } | { id, error: { code, message, details } }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isKernelError } from '../../core/index.js';
import { openIndexReader } from '../blocks/index-schema.js';
import { createFulltextQuery, type FulltextAnswer, type FulltextRequest } from './fulltext-query.js';

export interface QueryMessage { id: number; request: FulltextRequest }
export type QueryReply = { id: number; answer: FulltextAnswer } | { id: number; error: { code: string; message: string; details: Record<string, unknown> } };

const { file } = workerData as { file: string };
const query = createFulltextQuery(openIndexReader(file));

parentPort?.on('message', ({ id, request }: QueryMessage) => {
  let reply: QueryReply;
  try {
    reply = { id, answer: query(request) };
  } catch (error) {
    // A KernelError crosses as its fields (the main thread makes it again); anything else is a defect,
    // whose message (never a SQLite one: the query turns those into INVALID_INPUT) is kept for the log.
    reply = isKernelError(error)
      ? { id, error: { code: error.code, message: error.message, details: error.details } }
      : { id, error: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error), details: {} } };
  }
  parentPort!.postMessage(reply);
});
