import type { ActionCall } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';
import type { SearchRerank } from '../rerank/tokens.js';
import type { SemanticAnswer, SemanticSearch } from '../search-semantic/tokens.js';
import type { FulltextInput } from './fulltext-search.js';
import { parseQuery } from './query-language.js';
import { reciprocalRankFusion, RRF_K, type Ranked } from './rank-fusion.js';
import { snippet } from './snippet.js';
import { localOnlyAmong } from '../../core/index.js';

export type HybridInput = Omit<FulltextInput, 'documentCounts'> & { depth?: number };

type Arm = 'fulltext' | 'semantic';
type ArmScores = Partial<Record<Arm | 'rerank', { rank: number; score: number }>>;

interface FulltextHit { id: string; documentId: string; notebook: string; hpath: string; type: string; subtype: string | null; snippet: string; score: number }
interface FulltextAnswer { total: number; totalIsLowerBound: boolean; results: FulltextHit[] }

export interface HybridDeps {
  index: BlocksIndex;
  fulltext: (input: FulltextInput, call: ActionCall) => Promise<FulltextAnswer>;
  /** The optional capabilities, looked up at each call (a plugin may be disabled, or activate later). */
  semantic: () => SemanticSearch | undefined;
  rerank: () => SearchRerank | undefined;
}

/** Each arm contributes at most this many of its best hits; pages beyond the fused list are empty. */
const MAX_DEPTH = 1000;
/** At least this many per arm, so that fusion has something to work with on the first page. */
const MIN_DEPTH = 50;

interface BlockRow { id: string; type: string; subtype: string | null; root_id: string; notebook: string; hpath: string; content: string }

/**
 * `search.hybrid`: full text and semantic search, each for its best N, fused by reciprocal rank
 * fusion, then the head reranked when a reranker is on. Each result says which arms found it and at
 * what rank and score; the answer says which arms ran and why any did not. Without semantic search
 * (disabled, no embedder, failing) it is full-text search with the same paging, and says so.
 */
export function createHybridSearch(deps: HybridDeps) {
  const { index } = deps;
  return async function hybrid(input: HybridInput, call: ActionCall) {
    await index.ready();
    const page = input.page ?? 1;
    const pageSize = input.pageSize ?? 20;
    const reranker = deps.rerank();
    const rerankWhy = reranker === undefined ? 'reranking is disabled (the rerank plugin is not active)' : reranker.unavailable(call);
    // The same for every page of a query: fused at another depth, the order changes (a block 51st in both
    // arms outranks one 1st in one), and a page deeper repeated hits of the one before and skipped others.
    // Nor does it follow whether the reranker answers now (it rests after a timeout).
    const depth = Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, pageSize, input.depth ?? 0, reranker?.candidates ?? 0));
    const filters = { ...(input.notebooks ? { notebooks: input.notebooks } : {}), ...(input.path !== undefined ? { path: input.path } : {}), ...(input.types ? { types: input.types } : {}), ...(input.subtypes ? { subtypes: input.subtypes } : {}) };
    const notes: string[] = [];

    // The semantic arm, when it can run, alongside the full-text one.
    const semantic = deps.semantic();
    const semanticWhy = semantic === undefined ? 'semantic search is disabled (the search-semantic plugin is not active)' : semantic.unavailable(call);
    if (semanticWhy !== undefined && rerankWhy !== undefined) return fulltextOnly(deps, input, filters, call, [semanticWhy, rerankWhy]);
    const semanticRun = semanticWhy === undefined
      // Wrapped so that a provider throwing before its first await counts as a failed arm too.
      ? (async () => semantic!.search({ query: input.query, ...filters, limit: depth, offset: 0 }, call))().then((answer) => ({ answer }), (error: unknown) => ({ error }))
      : undefined;
    let fulltext: FulltextAnswer | undefined;
    let fulltextError: unknown;
    try {
      fulltext = await deps.fulltext({ query: input.query, ...filters, page: 1, pageSize: depth }, call);
    } catch (error) {
      fulltextError = error;
    }
    const semanticOutcome = semanticRun ? await semanticRun : undefined;
    call.signal.throwIfAborted();
    let semanticAnswer: SemanticAnswer | undefined;
    let semanticSkipped: string | undefined;
    if (semanticOutcome && 'answer' in semanticOutcome) semanticAnswer = semanticOutcome.answer;
    else semanticSkipped = semanticOutcome ? `semantic search failed: ${messageOf(semanticOutcome.error)}` : semanticWhy!;
    if (semanticSkipped) notes.push(semanticSkipped);
    // Without the semantic arm this is a full-text search, and its errors are the person's to see.
    if (fulltextError !== undefined && !semanticAnswer) throw fulltextError;
    if (fulltextError !== undefined) notes.push(`the full-text arm could not search this query: ${messageOf(fulltextError)}`);
    if (semanticAnswer && !semanticAnswer.complete) notes.push(semanticAnswer.note ?? 'semantic results are incomplete: some blocks have no current vector yet');

    const lists: Partial<Record<Arm, Ranked[]>> = {};
    if (fulltext) lists.fulltext = fulltext.results.map((hit, position) => ({ id: hit.id, rank: position + 1, score: hit.score }));
    if (semanticAnswer) lists.semantic = semanticAnswer.hits.map((hit) => ({ id: hit.id, rank: hit.rank, score: hit.score }));
    const fused = reciprocalRankFusion(lists);

    // Every arm's hits pass the caller's scope again here (the semantic arm enforces it itself; a
    // defect there must still not show a reader a private block).
    const rows = blockRows(index, fused.map((item) => item.id));
    const allowed = fused.filter((item) => {
      const row = rows.get(item.id);
      return row !== undefined && index.visibleTo(call, row.notebook) && (input.notebooks === undefined || input.notebooks.includes(row.notebook));
    });

    const ordered: { id: string; score: number; arms: ArmScores }[] = allowed.map((item) => ({ ...item, arms: { ...item.arms } }));
    const rerank = await rerankHead(ordered, reranker, rerankWhy, input.query, rows, page, pageSize, index, call);
    if (rerank.note) notes.push(rerank.note);

    const words = wordsOf(input.query, index);
    const fulltextSnippets = new Map(fulltext?.results.map((hit) => [hit.id, hit.snippet]));
    const start = (page - 1) * pageSize;
    if (start >= ordered.length && page > 1) {
      notes.push(depth < MAX_DEPTH
        ? `this page is past the ${ordered.length} fused results (each arm's best ${depth}): search again with a larger depth (at most ${MAX_DEPTH}) for more`
        : `this page is past the ${ordered.length} fused results (each arm's best ${MAX_DEPTH}, the most): narrow the query for more`);
    }
    const results = ordered.slice(start, start + pageSize).map((item, position) => {
      const row = rows.get(item.id)!;
      return {
        id: row.id, documentId: row.root_id, notebook: row.notebook, hpath: row.hpath, type: row.type, subtype: row.subtype,
        snippet: fulltextSnippets.get(row.id) ?? snippet(row.content, words),
        rank: start + position + 1, score: item.score, arms: item.arms,
      };
    });
    return {
      query: input.query, page, pageSize, total: ordered.length,
      /** Each arm gave at most `depth` hits: there may be more matches than `total`. */
      depth,
      fusion: { method: 'reciprocal rank fusion', k: RRF_K },
      arms: {
        fulltext: fulltext ? { ran: true, hits: fulltext.results.length, total: fulltext.total } : { ran: false, reason: messageOf(fulltextError) },
        semantic: semanticAnswer ? { ran: true, hits: semanticAnswer.hits.length, model: semanticAnswer.model, complete: semanticAnswer.complete, exact: semanticAnswer.exact } : { ran: false, reason: semanticSkipped! },
        rerank: rerank.ran ? { ran: true, candidates: rerank.candidates, ...(rerank.model ? { model: rerank.model } : {}) } : { ran: false, reason: rerank.note ?? 'not needed for this page' },
      },
      fellBackToFulltext: semanticAnswer === undefined,
      ...(notes.length ? { note: notes.join('; ') } : {}),
      results,
    };
  };
}

/**
 * Nothing to fuse and nothing to rerank: the full-text page itself, asked for as such (ranking a
 * deeper list and cutting the page out of it would cost more for the same answer). Same answer shape.
 */
async function fulltextOnly(deps: HybridDeps, input: HybridInput, filters: Omit<HybridInput, 'query' | 'page' | 'pageSize' | 'depth'>, call: ActionCall, notes: string[]) {
  const page = input.page ?? 1;
  const pageSize = input.pageSize ?? 20;
  const found = await deps.fulltext({ query: input.query, ...filters, page, pageSize }, call);
  const start = (page - 1) * pageSize;
  return {
    query: input.query, page, pageSize, total: found.total, depth: found.total,
    fusion: { method: 'reciprocal rank fusion', k: RRF_K },
    arms: { fulltext: { ran: true, hits: found.results.length, total: found.total }, semantic: { ran: false, reason: notes[0]! }, rerank: { ran: false, reason: notes[1]! } },
    fellBackToFulltext: true, note: notes.join('; '),
    results: found.results.map((hit, position) => {
      const rank = start + position + 1;
      return { ...hit, rank, score: 1 / (RRF_K + rank), arms: { fulltext: { rank, score: hit.score } } };
    }),
  };
}

/**
 * Reorders the first `candidates` of `ordered` in place by the reranker, when it is on and the page
 * shows some of them (a later page is in fused order whatever the reranker says, so it is not called).
 */
async function rerankHead(ordered: { id: string; score: number; arms: ArmScores }[], reranker: SearchRerank | undefined, why: string | undefined,
  query: string, rows: Map<string, BlockRow>, page: number, pageSize: number, index: BlocksIndex, call: ActionCall): Promise<{ ran: boolean; note?: string; model?: string; candidates?: number }> {
  if (why !== undefined || !reranker) return { ran: false, note: why ?? 'reranking is disabled' };
  const head = ordered.slice(0, reranker.candidates);
  if ((page - 1) * pageSize >= head.length) return { ran: false };
  if (head.length < 2) return { ran: false, note: 'not reranked: fewer than 2 candidates' };
  const localOnly = localOnlyAmong(index.notebooks());
  const answer = await reranker.rerank(query, head.map((item) => {
    const row = rows.get(item.id)!;
    return { id: item.id, text: row.content, ...(localOnly.has(row.notebook) ? { localOnly: true } : {}) };
  }), call.signal, call);
  if (!answer.reranked) return { ran: false, note: answer.note ?? 'not reranked', ...(answer.model ? { model: answer.model } : {}) };
  const byId = new Map(head.map((item) => [item.id, item]));
  const reordered = answer.order.map((entry, position) => {
    const item = byId.get(entry.id)!;
    if (entry.score !== undefined) item.arms.rerank = { rank: position + 1, score: entry.score };
    return item;
  });
  ordered.splice(0, head.length, ...reordered);
  return { ran: true, candidates: head.length, ...(answer.note ? { note: answer.note } : {}), ...(answer.model ? { model: answer.model } : {}) };
}

function blockRows(index: BlocksIndex, ids: string[]): Map<string, BlockRow> {
  if (ids.length === 0) return new Map();
  const rows = index.reader.prepare('SELECT id, type, subtype, root_id, notebook, hpath, content FROM blocks WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as BlockRow[];
  return new Map(rows.map((row) => [row.id, row]));
}

/** The query's words for snippets of blocks only the semantic arm found (none when it is not valid full-text syntax). */
function wordsOf(query: string, index: BlocksIndex): string[] {
  const parsed = parseQuery(query, (text) => index.searchText(text));
  return parsed.ok ? parsed.terms.filter((term) => !term.negated).map((term) => term.text) : [];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
