import { createToken, type ActionCall, type BackendCaller } from '../../core/index.js';

/** The filters every search arm takes (the same as `search.fulltext`'s). */
export interface SearchFilters {
  notebooks?: string[];
  /** A document id, or a path prefix such as `<notebook>/<document>`: the document and those below it. */
  path?: string;
  types?: string[];
  subtypes?: string[];
}

export interface SemanticQuery extends SearchFilters {
  query: string;
  /** How many of the best hits to return, counting from `offset`. */
  limit: number;
  offset?: number;
}

export interface SemanticHit {
  id: string;
  /** Cosine similarity to the query, higher is nearer. */
  score: number;
  /** 1-based, among all of this query's hits. */
  rank: number;
}

export interface SemanticAnswer {
  hits: SemanticHit[];
  /**
   * False while some blocks the filters allow have no current vector (being embedded, re-embedded after a
   * model change, failed, or kept local): the hits come from the blocks that have one. `note` says why.
   */
  complete: boolean;
  note?: string;
  /** The model whose vectors answered. */
  model: string;
  /** Whether the answer is exact (a small filtered selection) or from the ANN index. */
  exact: boolean;
}

/** What search-semantic offers other plugins (hybrid search in search-fulltext). */
export interface SemanticSearch {
  /**
   * Why semantic search cannot answer now (no embedder selected or available; or not for this caller:
   * a reader's search does not use an embedder with effects), or undefined when it can.
   */
  unavailable(caller?: BackendCaller): string | undefined;
  /** Honours the caller's scope: a reader sees published notebooks only, the agent none a deny rule hides. */
  search(query: SemanticQuery, call: ActionCall): Promise<SemanticAnswer>;
}

export const SEMANTIC_SEARCH = createToken<SemanticSearch>('search.semantic');
