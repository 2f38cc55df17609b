import { createToken, type BackendCaller } from '../../core/index.js';

export interface RerankCandidate {
  id: string;
  text: string;
  /**
   * The block's notebook is marked `egress: local-only`: its text is never sent to a reranker that
   * declares dataEgress; such a candidate keeps its place in the given order.
   */
  localOnly?: boolean;
}

export interface RerankAnswer {
  /** Every candidate exactly once: in the reranker's order when `reranked`, otherwise as given. */
  order: { id: string; score?: number }[];
  reranked: boolean;
  /** Why the given order was kept (the reranker failed, answered a wrong count or a duplicate index, too few candidates). */
  note?: string;
  model?: string;
}

/** What the rerank plugin offers other plugins (hybrid search). */
export interface SearchRerank {
  /** Why reranking cannot run now (no reranker selected or available, or not for this caller: a reader and a remote reranker), or undefined. */
  unavailable(caller?: BackendCaller): string | undefined;
  /** How many of the fused candidates to rerank (config, default 30). */
  readonly candidates: number;
  /** Never rejects for the reranker's failure: the given order is kept and `note` says why. Rejects only when aborted. */
  rerank(query: string, candidates: readonly RerankCandidate[], signal?: AbortSignal, caller?: BackendCaller): Promise<RerankAnswer>;
}

export const SEARCH_RERANK = createToken<SearchRerank>('search.rerank');
