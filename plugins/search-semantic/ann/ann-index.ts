/**
 * The approximate-nearest-neighbour index of search-semantic: a usearch HNSW graph over integer keys
 * (the `block_embeddings` rowid), cosine metric, persisted as `<dir>/<name>.<generation>.usearch` plus
 * the sidecar `<dir>/<name>.usearch.json`, which names the current graph file and is written last (the
 * commit point of a save; see ann-sidecar.ts). It is a cache of the embeddings table, never the source of truth:
 * whatever goes wrong with the file (missing, truncated, other dimensions or options) opens an empty
 * index with `needsRebuild` saying why, and the caller rebuilds it from SQLite.
 *
 * PUBLIC API (stable; search-semantic codes against it). Everything else in this folder is internal.
 *
 * Use:
 * - open; if `needsRebuild`, upsert every stored vector in batches of a few hundred, then save with the
 *   store's highest change sequence read before the rebuild began; else replay the changes after
 *   `savedWatermark`. Then apply changes as they come; save on a schedule (a save writes the whole
 *   graph: about 1 GB at 1M 384-d f16), never per change.
 * - One open AnnIndex per (dir, name): two would each replace the other's files.
 * - Filtered queries: when the allowed set is small, exactTopK over its vectors; otherwise
 *   searchAllowed, and exactTopK when it answers null.
 * - If the worker dies, every call rejects: close and open again (the file is intact).
 */
import { openAnnClient } from './ann-client.js';
import type { AllowedKeys } from './ann-filtered.js';

export type AnnQuantization = 'f32' | 'f16' | 'i8';

export interface AnnOptions {
  /** Length of every vector; a saved file of another length is not loaded (needsRebuild). */
  readonly dimensions: number;
  /** How vectors are stored in the graph; f16 (default) takes half the memory and file of f32. */
  readonly quantization?: AnnQuantization;
  /** HNSW M (default 16). Stored in the file: a file with another value needs a rebuild. */
  readonly connectivity?: number;
  /** HNSW efConstruction (default 128, chosen by bench/semantic-ann.ts). */
  readonly expansionAdd?: number;
  /** HNSW ef at query time (default 512: recall@10 0.999 at 1M in bench/semantic-ann.ts, p50 about 2.5 ms); not stored in the file. */
  readonly expansionSearch?: number;
  /**
   * Identifies the vectors' meaning (e.g. the embedder's model id); a saved file made for another
   * model is not loaded (needsRebuild). Optional: when absent only the shape is compared.
   */
  readonly model?: string;
}

/** One result: the key and its cosine similarity to the query (1 = same direction). */
export interface AnnHit {
  readonly key: number;
  readonly score: number;
}

/**
 * Where the usearch graph lives. 'worker' (default): on a worker thread, so that loading (about 1 s per
 * GB), saving (the same: usearch writes synchronously) and batch adds never hold the kernel's event loop;
 * each call costs a message round trip (a fraction of a millisecond). 'main': on the calling thread
 * (tests, benchmarks comparing the two).
 */
export type AnnThread = 'worker' | 'main';

/**
 * Every method is asynchronous because the graph lives on a worker thread (see AnnThread). Calls run in
 * the order they are made, except that queries (search, searchAllowed, has) go before writes still
 * waiting, so a bulk rebuild does not hold them up for more than one batch.
 */
export interface AnnIndex {
  /** Why the saved file was not used (missing, damaged, other dimensions/model/options); undefined when it was. */
  readonly needsRebuild: string | undefined;
  /**
   * The highest change sequence the loaded file is known to contain (0 for a new or rebuilt index).
   * After open, replay every change with a higher sequence (upsert or remove; both are idempotent).
   */
  readonly savedWatermark: number;
  readonly dimensions: number;
  /** Why the index can answer nothing any more (its worker thread stopped): close it and open it again. */
  failure(): Error | undefined;
  /** Number of vectors, as of the last call that finished. */
  size(): number;
  /**
   * Adds or replaces the vector of each key (a key already present is removed first, so usearch's
   * partial batch adds cannot leave a batch half in). Vectors need not be normalised (cosine metric).
   * Native work of about 1 ms per vector per core: batches of a few hundred keep queries waiting little.
   */
  upsert(keys: readonly number[], vectors: readonly Float32Array[]): Promise<void>;
  /** Removes these keys; absent keys are ignored. */
  remove(keys: readonly number[]): Promise<void>;
  has(key: number): Promise<boolean>;
  /** Unfiltered ANN top-k, best first. Never a scan. */
  search(query: Float32Array, k: number): Promise<AnnHit[]>;
  /**
   * ANN top-k among the keys `allowed` accepts (one at a time, or all the candidates at once), best first: one search with an over-fetch sized from
   * `selectivity` (the expected fraction of keys allowed, 0..1; ann-filtered.ts). Resolves null when
   * that fetch would be too large or brought fewer than k allowed keys, meaning "too selective for the
   * graph: search exactly among the allowed keys instead" (exactTopK). Never returns a key `allowed` rejects.
   */
  searchAllowed(query: Float32Array, k: number, allowed: AllowedKeys, selectivity: number): Promise<AnnHit[] | null>;
  /**
   * Writes the index durably (temporary file, fsync, rename, folder fsync, then the sidecar with
   * `watermark`): a crash at any point leaves the previous file and sidecar, or the new ones. It covers
   * every upsert/remove called before it (awaited or not), so pass the highest change sequence of those.
   */
  save(watermark: number): Promise<void>;
  /** Stops the worker and frees the native memory. Does not save. */
  close(): Promise<void>;
}

/**
 * Opens the index saved under `dir` as `name`, or an empty one (with `needsRebuild` set) when there
 * is none or it cannot be used. Never rejects for a bad file; rejects only for bad options.
 */
export async function openAnnIndex(dir: string, name: string, options: AnnOptions, thread: AnnThread = 'worker'): Promise<AnnIndex> {
  return openAnnClient(dir, name, options, thread);
}

/**
 * Exact top-k among candidates (the filtered path when the allowed set is small):
 * `exactTopK(query, candidateKeys, vectors, dimensions, k)` with `vectors` a flat Float32Array whose
 * row i is the vector of candidateKeys[i]. Cosine similarity in the result, best first.
 */
export { exactTopK } from './ann-exact.js';
