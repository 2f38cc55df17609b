import { KernelError, withTimeout, type SelectedBackend } from '../../core/index.js';
import { CONFIG_FIELD } from './config.js';

/** After a query the embedder failed, queries fail at once this long, saying why, rather than each wait for it. */
const QUIET_AFTER_FAILURE_MS = 30_000;

/**
 * The queries' embedder calls, with a short memory of failure: a hung embedder cost every search its
 * whole time limit (hybrid search's too, each waiting before answering from full text); after one
 * failure the next queries for 30 s are answered at once with that failure, then it is tried again.
 */
export class QueryEmbeddings {
  /** The backend that failed (the object: a config change makes another), until when, and how. */
  private failed: { backend: object; until: number; why: KernelError } | undefined;

  constructor(private readonly limitMs: number, private readonly now: () => number = Date.now) {}

  async embed(selected: SelectedBackend<'embedder'>, text: string, signal: AbortSignal): Promise<Float32Array> {
    const failed = this.failed;
    if (failed !== undefined && failed.backend === selected.backend && this.now() < failed.until) {
      const seconds = Math.ceil((failed.until - this.now()) / 1000);
      throw new KernelError('MODEL_UNAVAILABLE', `${failed.why.message}; it is asked again in ${seconds} s`, { details: { ...failed.why.details, retryAfterSeconds: seconds } });
    }
    try {
      const vector = await embedQuery(selected, text, signal, this.limitMs);
      this.failed = undefined;
      return vector;
    } catch (error) {
      // Only the embedder's being unreachable or silent is remembered: a query it refused (too long, filtered)
      // says nothing of the next one.
      if (!signal.aborted && error instanceof KernelError && unreachable(error)) this.failed = { backend: selected.backend, until: this.now() + QUIET_AFTER_FAILURE_MS, why: error };
      throw error;
    }
  }
}

/**
 * The query's vector, or a clear refusal: the embedder is given `limitMs` (a search is waited on by a
 * person, and hybrid search's full-text arm had answered long before), then not waited for any more,
 * whether or not it heeds the signal (an in-process model cannot be interrupted). Its failure is the
 * embedder's, said as such (`MODEL_UNAVAILABLE`, 503, naming it and the config field): it was a 500
 * `PLUGIN_ERROR` saying `Connection error.` and nothing more. The caller's own stop rejects as it is.
 */
async function embedQuery(selected: SelectedBackend<'embedder'>, text: string, signal: AbortSignal, limitMs: number): Promise<Float32Array> {
  const { backend } = selected;
  const name = `${selected.plugin}/${selected.name}`;
  try {
    const vector = await withTimeout(async (stop) => (backend.embedQuery ? backend.embedQuery(text, stop) : (await backend.embed([text], stop))[0]), limitMs, signal,
      () => new KernelError('MODEL_UNAVAILABLE', `the embedder ${name} did not embed the query within ${limitMs} ms (plugins.search-semantic.config.queryTimeoutMs)`, { details: { field: CONFIG_FIELD, embedder: name, limitMs, retryAfterSeconds: 5 } }));
    if (!(vector instanceof Float32Array) || vector.length === 0) {
      throw new KernelError('MODEL_UNAVAILABLE', `the embedder ${name} answered no vector for the query`, { details: { field: CONFIG_FIELD, embedder: name } });
    }
    // A vector of zeros points nowhere (every block is equally far from it) and one with NaN in it ranks
    // nothing: either answered hits in an arbitrary order as if they were the query's nearest.
    const finite = vector.every(Number.isFinite);
    if (!finite || vector.every((value) => value === 0)) {
      throw new KernelError('MODEL_UNAVAILABLE', `the embedder ${name} answered a vector for the query that ${finite ? 'is all zeros' : 'is not all numbers'}: no block can be compared with it`, { details: { field: CONFIG_FIELD, embedder: name } });
    }
    return vector;
  } catch (error) {
    if (signal.aborted || error instanceof KernelError) throw error;
    const category = (error as { category?: unknown } | null)?.category;
    throw new KernelError('MODEL_UNAVAILABLE', `the embedder ${name} could not embed the query: ${error instanceof Error ? error.message : String(error)}`, {
      details: { field: CONFIG_FIELD, embedder: name, ...(typeof category === 'string' ? { category } : {}) },
    });
  }
}

/** A failure of the embedder itself (no answer in time, no connection, a server error), not of one query. */
function unreachable(error: KernelError): boolean {
  const { limitMs, category } = error.details;
  return limitMs !== undefined || category === 'timeout' || category === 'network' || category === 'server';
}
