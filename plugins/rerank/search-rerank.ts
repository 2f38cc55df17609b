import type { BackendCaller, BackendHandle, Logger } from '../../core/index.js';
import { firstCodePoints, withTimeout } from '../../core/index.js';
import type { RerankAnswer, RerankCandidate, SearchRerank } from './tokens.js';

/** `plugins.rerank.config` in quire.json. */
export interface RerankConfig {
  /** `<plugin id>` or `<plugin id>/<reranker name>`; without it reranking is off. */
  reranker?: string;
  candidates?: number;
  maxCharacters?: number;
  timeoutMs?: number;
  /** After a reranker timed out, how long searches keep the fused order without asking it. */
  retryAfterMs?: number;
}

export const DEFAULT_CANDIDATES = 30;
/** SiYuan cuts each document to 4000 runes; characters here (code points), never bytes. */
export const DEFAULT_MAX_CHARACTERS = 4000;
/** Whatever the backend (a remote API, a local model on a busy CPU), a search waits no longer for it. */
const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * A reranker that stalled is not asked again for this long: every hybrid search waited its whole
 * timeout (30 s each) for one that had stopped answering. The first search after it asks again.
 */
const DEFAULT_RETRY_AFTER_MS = 60_000;

/**
 * Reranking that never fails the search it serves: whatever goes wrong (no reranker, an error, a
 * timeout, a wrong count, a score that is not a number), the given order is kept, `reranked` is false
 * and `note` says why. Only the caller's own abort rejects.
 */
export function createSearchRerank(handle: BackendHandle<'reranker'> | undefined, config: RerankConfig, log: Logger): SearchRerank {
  const maxCharacters = config.maxCharacters ?? DEFAULT_MAX_CHARACTERS;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const unavailable = (caller?: BackendCaller): string | undefined => (handle ? handle.unavailable(caller) : 'no reranker is configured (plugins.rerank.config.reranker)');
  const retryAfterMs = config.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
  // Per reranker (its backend: one made again by a config change starts fresh): until when one that
  // timed out is not asked. A failure that answers at once costs a search nothing, and is asked again each time.
  const restUntil = new WeakMap<object, number>();

  async function rerank(query: string, candidates: readonly RerankCandidate[], signal?: AbortSignal, caller?: BackendCaller): Promise<RerankAnswer> {
    const kept = (note: string, model?: string): RerankAnswer => ({ order: candidates.map(({ id }) => ({ id })), reranked: false, note, ...(model ? { model } : {}) });
    signal?.throwIfAborted();
    const reason = unavailable(caller);
    const selected = handle?.current(caller);
    if (reason !== undefined || !selected) return kept(`not reranked: ${reason ?? 'no reranker'}`);
    const { backend } = selected;
    // A remote reranker never sees a local-only notebook's text: those candidates keep their places.
    const remote = selected.effects.includes('dataEgress');
    const sent = candidates.filter((candidate) => !(remote && candidate.localOnly));
    const withheld = candidates.length - sent.length;
    if (sent.length < 2) return kept(withheld > 0 ? `not reranked: ${withheld} of the ${candidates.length} candidates are in local-only notebooks, which a remote reranker is not sent` : 'not reranked: fewer than 2 candidates', backend.model);
    const key = `${selected.plugin}/${selected.name}`;
    const resting = restUntil.get(backend);
    if (resting !== undefined && Date.now() < resting) {
      return kept(`not reranked: the reranker ${key} did not answer within ${timeoutMs} ms lately; it is asked again from ${new Date(resting).toISOString()}`, backend.model);
    }
    // Its rest over, one search asks it; those meanwhile keep resting it until that one has its answer
    // (every search at the end of a rest asked, and each waited the whole timeout again).
    if (resting !== undefined) restUntil.set(backend, Date.now() + timeoutMs);
    let scores: number[];
    let stalled = false;
    try {
      scores = await withTimeout((inner) => backend.rerank(query, sent.map((candidate) => firstCodePoints(candidate.text, maxCharacters)), inner), timeoutMs, signal, () => {
        stalled = true;
        return new Error(`the reranker did not answer within ${timeoutMs} ms`);
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const message = error instanceof Error ? error.message : String(error);
      if (stalled) restUntil.set(backend, Date.now() + retryAfterMs);
      else if (resting !== undefined) restUntil.delete(backend);
      log.warn('reranker failed; the fused order is kept', { reranker: key, reason: message });
      return kept(`the reranker ${key} failed, the fused order is kept: ${message}`, backend.model);
    }
    // It answered (rightly or not): rested no more.
    restUntil.delete(backend);
    const fault = faultOf(scores, sent.length);
    if (fault) {
      log.warn('reranker answered wrong; the fused order is kept', { reranker: key, reason: fault });
      return kept(`the reranker ${key} ${fault}; the fused order is kept`, backend.model);
    }
    // Best first; equal scores keep the given order (Array.prototype.sort is stable).
    const reordered = sent.map((candidate, index) => ({ id: candidate.id, score: scores[index]! })).sort((a, b) => b.score - a.score);
    // The sent candidates take the places the sent candidates held, in the reranker's order; the withheld keep theirs.
    let next = 0;
    const order = candidates.map((candidate) => (remote && candidate.localOnly ? { id: candidate.id } : reordered[next++]!));
    return {
      order, reranked: true, model: backend.model,
      ...(withheld > 0 ? { note: `${withheld} candidates in local-only notebooks were not sent to the remote reranker and kept their places` } : {}),
    };
  }

  return { unavailable, candidates: config.candidates ?? DEFAULT_CANDIDATES, rerank };
}

/** What is wrong with a backend's scores, if anything: the contract is one finite number per document. */
function faultOf(scores: unknown, count: number): string | undefined {
  if (!Array.isArray(scores)) return 'answered no list of scores';
  if (scores.length !== count) return `answered ${scores.length} scores for ${count} documents`;
  const bad = scores.findIndex((score) => typeof score !== 'number' || !Number.isFinite(score));
  return bad >= 0 ? `answered the score ${JSON.stringify(scores[bad])} for document ${bad}` : undefined;
}


