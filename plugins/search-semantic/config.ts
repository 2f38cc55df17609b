/** `plugins.search-semantic.config` in quire.json (the manifest's schema checks it before activation). */
export interface SemanticConfig {
  /** `<plugin id>` or `<plugin id>/<embedder name>`; without it semantic search is off. */
  embedder?: string;
  ignore?: IgnoreConfig;
  batchSize?: number;
  retry?: Partial<RetryConfig>;
  exactBelow?: number;
  saveEveryMs?: number;
  queryTimeoutMs?: number;
}

export interface IgnoreConfig {
  /** Notebook ids or id paths (`<notebook>/<document>`), or title paths starting with '/'. */
  paths?: string[];
  types?: string[];
  minChars?: number;
  maxChars?: number;
}

export interface RetryConfig {
  baseMs: number;
  maxMs: number;
  maxFailures: number;
  pauseMs: number;
}

export const CONFIG_FIELD = 'plugins.search-semantic.config.embedder';

/**
 * SiYuan waits 30 s × 2^(failures−1) up to 30 min and gives up after 8 (REFERENCE §7); the same here,
 * but a failed call pauses the indexer with its own doubling pause instead of retrying every 30 s, and
 * `retry_failed` brings given-up blocks back.
 */
export const DEFAULT_RETRY: RetryConfig = { baseMs: 30_000, maxMs: 30 * 60_000, maxFailures: 8, pauseMs: 30_000 };
export const DEFAULT_BATCH = 32;
/**
 * Below this many allowed blocks a filtered query is answered exactly. The exact answer reads each allowed
 * vector from embeddings.db (about 5 µs a vector at 384 dimensions: 53 ms for 10,000); the graph's
 * filtered search (ann-filtered.ts) costs 1.3–2 ms from 5% of the blocks allowed and about 25 ms at 1%,
 * below which it answers exactly itself. 5,000 (about 27 ms) keeps small selections exact in any store.
 */
export const DEFAULT_EXACT_BELOW = 5_000;
/**
 * While the HNSW index is opened or rebuilt, an unfiltered query over at most this many vectors is
 * answered by reading them all (about 100 ms for 20,000); a larger store answers from full text alone,
 * saying so. Config `exactBelow`, when set, is both limits.
 */
export const DEFAULT_SCAN_WHILE_BUILDING_BELOW = 20_000;
export const DEFAULT_SAVE_EVERY_MS = 60_000;
/** Characters, not bytes: a short CJK phrase is as meaningful as a longer English one. */
export const DEFAULT_MIN_CHARS = 4;
export const DEFAULT_MAX_CHARS = 12_000;
/**
 * How long a search waits for the embedder to embed its query: a person is waiting, and hybrid search's
 * full-text arm has answered long before (a hung embedder held every hybrid search 60 s, its batch limit).
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;
