import { KernelError, readableNotebooks, readsAreScoped, type ActionCall, type BackendCaller, type BackendHandle } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';
import type { AnnHit } from './ann/ann-index.js';
import type { AnnSync } from './ann-sync.js';
import { CONFIG_FIELD } from './config.js';
import type { EmbeddingStore } from './embedding-store.js';
import { storedModelKey } from './indexer.js';
import { QueryEmbeddings } from './query-embedding.js';
import type { SearchFilters, SemanticQuery } from './tokens.js';
import { blobInto } from './vector-blob.js';
import { documentOfPath, ftsColumnFilters } from '../blocks/fts-filters.js';
import { FILTER_MARGIN, MAX_NEEDED } from './ann/ann-filtered.js';

/**
 * A filtered query's selection is counted up to this many blocks: enough to size the graph's over-fetch
 * (a larger share would fetch the least, MIN_FETCH, anyway), at a few milliseconds of doclist.
 */
const SELECTION_COUNTED = 100_000;
/**
 * A search waits this long at most for a saved graph being opened (a start, a one-shot CLI search): a
 * few seconds at a million vectors from a warm disk; past it, the answer says the graph is not ready.
 */
const OPENING_WAIT_MS = 5_000;
/** The deepest rank semantic search answers (hybrid search ranks as deep). */
export const MAX_RANKED = 1_000;

export interface SearchDeps {
  store: () => Promise<EmbeddingStore>;
  blocks: BlocksIndex;
  handle: BackendHandle<'embedder'> | undefined;
  ann: () => AnnSync | undefined;
  /** A filtered query with at most this many allowed vectors is answered exactly among them. */
  exactBelow: number;
  /** While the HNSW index is not ready, an unfiltered query is answered exactly when the store holds at most this many vectors. */
  scanWhileBuildingBelow: number;
  /** Why answers may miss blocks now (pending, failed, kept local, being compared at start), or undefined; said to `call` as it may learn it. */
  incomplete: (call: ActionCall) => string | undefined;
  /** How long the embedder is waited for to embed a query. */
  queryTimeoutMs: number;
  /** Takes on a size the embedder answered a query in, other than the stored vectors': every block is embedded again. */
  adoptSize: (model: string, dimensions: number) => Promise<void>;
}

/** A hit by its store key, before the block's row is read. */
export interface KeyedHit { key: number; score: number }

/** One page of hits, best first, with what the answer may be missing. */
export interface KeyedAnswer {
  hits: KeyedHit[];
  /** Rank of the first hit minus one. */
  offset: number;
  complete: boolean;
  note?: string;
  model: string;
  exact: boolean;
}

/** A hit's block as the blocks index holds it. */
export interface HitBlock {
  key: number;
  id: string;
  root_id: string;
  notebook: string;
  hpath: string;
  type: string;
  subtype: string | null;
  content: string;
}

/**
 * Why semantic search cannot answer now, or undefined when it can. With a caller: a reader's search does
 * not use an embedder with effects (BackendRegistry says so), so it is unavailable to them.
 */
export function unavailableReason(handle: BackendHandle<'embedder'> | undefined, caller?: BackendCaller): string | undefined {
  if (!handle) return `no embedder is configured: set ${CONFIG_FIELD} to '<plugin id>' (e.g. 'providers' or 'local-models')`;
  return handle.current(caller) ? undefined : handle.unavailable(caller);
}

/**
 * Semantic search within the caller's scope. Candidates are selected in SQLite (filters, reader and
 * deny-rule scope, model and size of the vectors): a small selection is searched exactly, a large one
 * through the HNSW index with over-fetch and the allowed check, and an unfiltered query through the
 * HNSW index only, never by a scan. Hits are checked against the store again before they are returned.
 */
export function createSemanticSearch(deps: SearchDeps) {
  const queries = new QueryEmbeddings(deps.queryTimeoutMs);
  return async function search(query: SemanticQuery, call: ActionCall): Promise<KeyedAnswer> {
    const reason = unavailableReason(deps.handle, call);
    if (reason !== undefined) throw new KernelError('MODEL_UNAVAILABLE', `Semantic search is off: ${reason}`, { details: { field: CONFIG_FIELD } });
    await deps.blocks.ready();
    // The caller's: a reader never gets an embedder that sends the query away.
    const selected = deps.handle!.current(call);
    if (!selected) throw new KernelError('MODEL_UNAVAILABLE', `Semantic search is off: ${deps.handle!.unavailable(call) ?? 'no embedder'}`, { details: { field: CONFIG_FIELD } });
    const offset = query.offset ?? 0;
    const k = offset + query.limit;
    // A page far down asked the graph for up to 100,000 neighbours, and a filtered one read as many
    // vectors on the event loop: semantic ranks the nearest MAX_RANKED blocks, as hybrid search does.
    if (k > MAX_RANKED) throw new KernelError('INVALID_INPUT', `semantic search ranks the nearest ${MAX_RANKED} blocks: page × pageSize may be at most ${MAX_RANKED} (asked up to rank ${k}); narrow the search with filters instead`, { details: { field: 'page', limit: MAX_RANKED } });
    const store = await deps.store();
    const vector = await queries.embed(selected, query.query, call.signal);
    const model = storedModelKey(store, selected);
    const dimensions = vector.length;
    const notes: string[] = [];
    // The embedder answers another size than the stored vectors have (a model swapped behind its name,
    // learnt at this first answer after a restart): none of them can be compared with the query. It was
    // answered empty and complete, and nothing was embedded again until the next write.
    const stored = store.dimensionsOf(model);
    if (stored !== undefined && stored !== dimensions) {
      await deps.adoptSize(model, dimensions);
      notes.push(`the embedder now answers vectors of ${dimensions} dimensions where the stored ones have ${stored}: every block is being embedded again`);
    }
    const pending = deps.incomplete(call);
    if (pending) notes.push(pending);
    const scope = notebookScope(deps.blocks, call, query.notebooks);
    // A scope of every notebook filters nothing, yet selecting its blocks read every vector's row on the
    // event loop (2 s at a million blocks): searched unfiltered instead, its hits checked against the
    // scope (a block of a notebook the catalog no longer lists is dropped, not shown).
    const everyNotebook = scope !== undefined && coversEveryNotebook(scope, deps.blocks);
    const answer = (hits: KeyedHit[], exact: boolean): KeyedAnswer => ({
      hits: (everyNotebook ? withinNotebooks(store, hits, scope) : hits).slice(offset, k),
      offset, complete: notes.length === 0, ...(notes.length > 0 ? { note: notes.join('; ') } : {}), model, exact,
    });
    if (scope !== undefined && scope.length === 0) return answer([], true);
    const filter = filterSql(query, everyNotebook ? undefined : scope);
    await deps.ann()?.whileOpening(OPENING_WAIT_MS, call.signal);
    await deps.ann()?.caughtUp(call.signal);
    const ann = deps.ann()?.ready(model, dimensions);
    if (filter.where.length === 0) {
      if (!ann) {
        // While the HNSW index is opened or rebuilt, a small store is searched exactly; a large one is not scanned.
        if (store.vectorCount(model, dimensions) <= deps.scanWhileBuildingBelow) {
          const every = store.prepared('SELECT key FROM block_embeddings WHERE model = ? AND dimensions = ? AND has_vector = 1').pluck().all(model, dimensions) as number[];
          return answer(await exactAmong(store, vector, every, dimensions, k), true);
        }
        notes.push(withoutGraph(deps.ann()));
        return answer([], false);
      }
      return answer(verified(store, await ann.search(vector, k), model, dimensions), false);
    }
    const where = filter.where.join(' AND ');
    // The filters as full-text column constraints select the blocks from the columns' doclists: the
    // blocks table has no index on notebook or type, and selecting by its columns read it whole (1.1 s at
    // a million blocks, even for no block at all). The SQL filter still decides; the full-text one only
    // narrows what it reads.
    const columns = ftsColumnFilters({ notebooks: everyNotebook ? undefined : scope, document: query.path === undefined ? undefined : documentOfPath(query.path), types: query.types, subtypes: query.subtypes }).join(' AND ');
    // Both sides of the share in blocks: the selection counts blocks, the store holds a row per block.
    const blocksInStore = Math.max(1, store.rowCount());
    // Counted far enough to tell exact from not, and to size the graph's over-fetch for this k within MAX_NEEDED.
    const countUpTo = Math.max(SELECTION_COUNTED, deps.exactBelow + 1, deps.scanWhileBuildingBelow + 1, Math.ceil((blocksInStore * k * FILTER_MARGIN) / MAX_NEEDED) + 1);
    const selection = store.prepared('SELECT count(*) FROM (SELECT 1 FROM blk.blocks_fts WHERE blocks_fts MATCH ? LIMIT ?)').pluck().get(columns, countUpTo) as number;
    const allowedKeys = (): number[] => store.prepared(`SELECT e.key FROM blk.blocks_fts f JOIN blk.blocks b ON b.rowid = f.rowid JOIN block_embeddings e ON e.block_id = b.id
      WHERE f.blocks_fts MATCH ? AND e.model = ? AND e.dimensions = ? AND e.has_vector = 1 AND ${where}`).pluck().all(columns, model, dimensions, ...filter.params) as number[];
    if (selection <= deps.exactBelow) return answer(await exactAmong(store, vector, allowedKeys(), dimensions, k), true);
    const exactScanBound = Math.max(deps.exactBelow, deps.scanWhileBuildingBelow);
    if (!ann) {
      // While the graph is opened or rebuilt (a cold start at a million vectors: 18 s), or when it failed,
      // a large selection is not read whole as an exact search would (every allowed vector, on the event
      // loop), no more than an unfiltered query is.
      if (selection <= deps.scanWhileBuildingBelow) return answer(await exactAmong(store, vector, allowedKeys(), dimensions, k), true);
      notes.push(withoutGraph(deps.ann()));
      return answer([], false);
    }
    // Many blocks selected: the graph's results are checked against the filter, a few hundred to a few
    // thousand keys, rather than a set of every allowed key made first. A count cut at countUpTo
    // understates the share, which only fetches more.
    let checked: ReadonlySet<number> = new Set();
    const among = (keys: readonly number[]): ReadonlySet<number> => (checked = new Set(store.prepared(`SELECT e.key FROM block_embeddings e JOIN blk.blocks b ON b.id = e.block_id
      WHERE e.key IN (SELECT value FROM json_each(?)) AND e.model = ? AND e.dimensions = ? AND e.has_vector = 1 AND ${where}`).pluck().all(JSON.stringify(keys), model, dimensions, ...filter.params) as number[]));
    const found = await ann.searchAllowed(vector, k, { among }, selection / blocksInStore);
    if (found === null) {
      // The exact answer reads every allowed vector on the event loop: only within the exact-scan bound
      // (it was any selection under countUpTo, which grows with k and the store: 244,000 vectors, over a
      // second, for k = 1,000 at a million blocks).
      if (selection <= exactScanBound) return answer(await exactAmong(store, vector, allowedKeys(), dimensions, k), true);
      // The graph's nearest MAX_NEEDED, those within the filter: what it can answer within one query's work.
      const near = await ann.search(vector, MAX_NEEDED);
      among(near.map((hit) => hit.key));
      const hits = verified(store, near, model, dimensions).filter((hit) => checked.has(hit.key));
      if (hits.length < k) notes.push('the vector index found fewer blocks within this filter near the query than asked, and the filter selects too many to search them all: narrow it');
      return answer(hits, false);
    }
    return answer(verified(store, found, model, dimensions).filter((hit) => checked.has(hit.key)), false);
  };
}

/** The blocks of these keys, by key (a block removed meanwhile is missing). */
export function blocksOf(store: EmbeddingStore, keys: readonly number[]): Map<number, HitBlock> {
  if (keys.length === 0) return new Map();
  const rows = store.prepared(`SELECT e.key, b.id, b.root_id, b.notebook, b.hpath, b.type, b.subtype, b.content FROM block_embeddings e JOIN blk.blocks b ON b.id = e.block_id
    WHERE e.key IN (SELECT value FROM json_each(?))`).all(JSON.stringify(keys)) as HitBlock[];
  return new Map(rows.map((row) => [row.key, row]));
}

/** ANN hits whose keys still hold a vector of this model and size. */
function verified(store: EmbeddingStore, hits: readonly AnnHit[], model: string, dimensions: number): KeyedHit[] {
  if (hits.length === 0) return [];
  const live = new Set(store.prepared('SELECT key FROM block_embeddings WHERE key IN (SELECT value FROM json_each(?)) AND model = ? AND dimensions = ? AND has_vector = 1')
    .pluck().all(JSON.stringify(hits.map((hit) => hit.key)), model, dimensions) as number[]);
  return hits.filter((hit) => live.has(hit.key)).map((hit) => ({ key: hit.key, score: hit.score }));
}

const VECTOR_PAGE = 4_096;

async function exactAmong(store: EmbeddingStore, query: Float32Array, keys: readonly number[], dimensions: number, k: number): Promise<KeyedHit[]> {
  if (keys.length === 0) return [];
  const matrix = new Float32Array(keys.length * dimensions);
  const order: number[] = [];
  for (let start = 0; start < keys.length; start += VECTOR_PAGE) {
    const rows = store.prepared('SELECT key, vector FROM embedding_vectors WHERE key IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(keys.slice(start, start + VECTOR_PAGE))) as { key: number; vector: Buffer }[];
    for (const row of rows) {
      if (row.vector.length !== dimensions * 4) continue;
      blobInto(row.vector, matrix, order.length * dimensions);
      order.push(row.key);
    }
  }
  const { exactTopK } = await import('./ann/ann-index.js');
  return exactTopK(query, order, matrix.subarray(0, order.length * dimensions), dimensions, k).map((hit) => ({ key: hit.key, score: hit.score }));
}

/** Why there are no semantic results without the graph: being opened or rebuilt, or not available at all. */
function withoutGraph(sync: AnnSync | undefined): string {
  if (sync?.state === 'opening') return 'the saved vector index is still being opened: semantic results follow once it is open';
  if (sync?.state === 'rebuilding') return 'the vector index is being built: semantic results follow once it is ready';
  return 'the vector index is not available (see the embeddings status): semantic search covers only small selections until it is rebuilt';
}

/** Whether `scope` names every notebook of the workspace. */
function coversEveryNotebook(scope: readonly string[], index: BlocksIndex): boolean {
  const named = new Set(scope);
  for (const id of index.notebooks().keys()) if (!named.has(id)) return false;
  return true;
}

/** The hits whose blocks lie in these notebooks. */
function withinNotebooks(store: EmbeddingStore, hits: readonly KeyedHit[], notebooks: readonly string[]): KeyedHit[] {
  if (hits.length === 0) return [];
  const inside = new Set(store.prepared(`SELECT e.key FROM block_embeddings e JOIN blk.blocks b ON b.id = e.block_id
    WHERE e.key IN (SELECT value FROM json_each(?)) AND b.notebook IN (SELECT value FROM json_each(?))`).pluck()
    .all(JSON.stringify(hits.map((hit) => hit.key)), JSON.stringify(notebooks)) as number[]);
  return hits.filter((hit) => inside.has(hit.key));
}

/**
 * The notebooks to search, or undefined for all: a reader is held to published notebooks whatever the
 * filter asks, and the agent to those no deny rule closes to it (as search-fulltext does).
 */
function notebookScope(index: BlocksIndex, call: ActionCall, requested: readonly string[] | undefined): string[] | undefined {
  if (!readsAreScoped(call)) return requested ? [...requested] : undefined;
  // Core answers who reads what (core/gate/read-scope.ts).
  const allowed = readableNotebooks(call, index.notebooks());
  return requested ? allowed.filter((id) => requested.includes(id)) : allowed;
}

function filterSql(filters: SearchFilters, notebooks: string[] | undefined): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (notebooks !== undefined) { where.push('b.notebook IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(notebooks)); }
  if (filters.path !== undefined) {
    const document = documentOfPath(filters.path);
    where.push("(b.root_id = ? OR instr('/' || b.path, '/' || ? || '/') > 0)");
    params.push(document, document);
  }
  if (filters.types?.length) { where.push('b.type IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(filters.types)); }
  if (filters.subtypes?.length) { where.push('b.subtype IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(filters.subtypes)); }
  return { where, params };
}

