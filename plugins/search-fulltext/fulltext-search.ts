import { AsyncResource } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import { KernelError, WorkerPool, compiledScript, readableNotebooks, readsAreScoped, startWorker, type ActionCall, type ErrorCode } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';
import { documentOfPath } from '../blocks/fts-filters.js';
import { createFulltextQuery, type FulltextAnswer, type FulltextInput, type FulltextRequest, type SearchOptions } from './fulltext-query.js';
import type { QueryMessage, QueryReply } from './fulltext-worker.js';
import { parseQuery } from './query-language.js';

export type { FulltextInput, SearchOptions } from './fulltext-query.js';

/**
 * Query threads by default: one per core, at most four. SQLite runs a statement to its end on the
 * thread that asked for it; on the main thread, a query reading a cold index held every request of the
 * kernel (a first three-word query at a million blocks: 14.7 to 24 s from a cold disk). On a worker,
 * only that query waits, and its caller's time limit answers it (the worker is then ended).
 */
const QUERY_WORKERS = Math.min(4, Math.max(2, availableParallelism()));

/**
 * A query its caller gave up (a search typed letter by letter cancels the one before) may still answer
 * this long before its worker is ended: most warm queries take 5 to 150 ms at a million blocks, and an
 * ended worker costs a new thread and its connection's warmed cache.
 */
const GIVEN_UP_GRACE_MS = 250;

export interface FulltextSearch {
  (input: FulltextInput, call: ActionCall): Promise<FulltextAnswer>;
  /** Ends the query workers; queries still waiting are refused. */
  close(): Promise<void>;
}

/** Full-text search over the blocks index, within what the caller may see. */
export function createFulltextSearch(index: BlocksIndex, options: SearchOptions = {}): FulltextSearch {
  const run = queryRunner(index, options);
  const search = async (input: FulltextInput, call: ActionCall): Promise<FulltextAnswer> => {
    await index.ready();
    // Checked here, so that bad input is answered without a trip to a worker.
    const parsed = parseQuery(input.query, (text) => index.searchText(text));
    if (!parsed.ok) throw new KernelError('INVALID_INPUT', parsed.message, { details: { field: 'query' } });
    if (input.path !== undefined) documentOfPath(input.path);
    const queryOptions = withoutThreads(options);
    let scope = notebookScope(index, call, input.notebooks);
    // The scope is the caller's when the query started; a notebook closed to them while it waited or ran
    // (a notebook unpublished, then written to) may be in its answer: asked again within the new scope.
    for (let tries = 1; ; tries++) {
      const answer = await run.query({ input, scope, rankScores: readsAreScoped(call), options: queryOptions }, call.signal);
      const now = notebookScope(index, call, input.notebooks);
      if (!narrower(scope, now)) return answer;
      if (tries === 2) throw new KernelError('CONFLICT', 'The notebooks you may read changed during the search; search again');
      scope = now;
    }
  };
  return Object.assign(search, { close: run.close });
}

interface QueryRunner {
  query(request: FulltextRequest, signal: AbortSignal): Promise<FulltextAnswer>;
  close(): Promise<void>;
}

/**
 * Where the queries run: on worker threads, when the compiled worker is at hand (the built kernel; the
 * TypeScript sources under a test runner use the build's), else on the main thread's reader.
 */
function queryRunner(index: BlocksIndex, options: SearchOptions): QueryRunner {
  const workers = options.queryWorkers ?? QUERY_WORKERS;
  const script = workers > 0 ? compiledScript(import.meta.url, 'fulltext-worker.js', '../../dist/plugins/search-fulltext/fulltext-worker.js') : undefined;
  if (!script) {
    const query = createFulltextQuery(index.reader);
    return { query: async (request) => query(request), close: async () => undefined };
  }
  // Workers start on first use, in the async context of this plugin's activation, not of the action that
  // happens to need one first: the egress guard then gives them no effects, whichever action that was.
  const activation = new AsyncResource('quire.fulltext-workers');
  const pool = new WorkerPool<{ request: FulltextRequest }, QueryReply>(
    () => activation.runInAsyncScope(() => startWorker(script, { workerData: { file: index.file } })),
    workers, { name: 'the full-text query worker', graceMs: GIVEN_UP_GRACE_MS });
  return {
    async query(request, signal) {
      const reply = await pool.run({ request } satisfies Omit<QueryMessage, 'id'>, signal);
      if ('error' in reply) throw new KernelError(reply.error.code as ErrorCode, reply.error.message, { details: reply.error.details });
      return reply.answer;
    },
    close: () => pool.close(),
  };
}

/** What a query needs of the options: the thread count is the runner's. */
function withoutThreads({ queryWorkers: _threads, ...rest }: SearchOptions): SearchOptions {
  return rest;
}

/** Whether `after` leaves out a notebook `before` let the query read (undefined: every notebook). */
function narrower(before: readonly string[] | undefined, after: readonly string[] | undefined): boolean {
  if (after === undefined) return false;
  if (before === undefined) return true;
  const allowed = new Set(after);
  return before.some((id) => !allowed.has(id));
}

/**
 * The notebooks to search, or undefined for all: a reader is held to published notebooks whatever
 * the filter asks, so that no private block, snippet or count reaches them, and the agent to those no
 * deny rule closes to it.
 */
function notebookScope(index: BlocksIndex, call: ActionCall, requested: string[] | undefined): string[] | undefined {
  if (!readsAreScoped(call)) return requested;
  // Core answers who reads what (core/gate/read-scope.ts).
  const allowed = readableNotebooks(call, index.notebooks());
  return requested ? allowed.filter((id) => requested.includes(id)) : allowed;
}
