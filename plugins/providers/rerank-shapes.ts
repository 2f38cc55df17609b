import type { RerankShape } from './config.js';

/**
 * The `/rerank` dialects, checked against each vendor's API reference:
 * - Cohere v2: `POST /v2/rerank` `{model, query, documents}` → `{results: [{index, relevance_score}]}`
 *   (`model` required; `top_n` left out: every document is scored).
 * - Jina: `POST /v1/rerank`, Cohere's request and answer; `return_documents: false` so the texts are not
 *   sent back (Jina's default echoes them).
 * - Voyage: `POST /v1/rerank` `{query, documents, model}` → `{data: [{index, relevance_score}]}`
 *   (`top_k` instead of `top_n`, left out too; `model` required).
 * - Hugging Face TEI: `POST /rerank` `{query, texts, truncate}` → `[{index, score}]` (a bare array; the
 *   documents are `texts`; `truncate: true` because TEI refuses an over-long pair otherwise).
 * Every dialect answers results sorted by score with the index of each document in the request.
 */
export interface ShapeOf {
  path: string;
  defaultBaseURL?: string;
  /** The environment variable the key is read from unless the config names another; none: no key. */
  defaultKeyEnv?: string;
  /** Whether the API refuses a request without a model. */
  needsModel: boolean;
  body(query: string, documents: readonly string[], model: string | undefined): Record<string, unknown>;
  /** The answer's `[index, score]` pairs, or a sentence saying what is wrong with it. */
  parse(answer: unknown): { pairs: [unknown, unknown][] } | { problem: string };
}

const withModel = (model: string | undefined) => (model === undefined ? {} : { model });

function listOf(answer: unknown, field: string | undefined, scoreField: string): { pairs: [unknown, unknown][] } | { problem: string } {
  const list = field === undefined ? answer : (answer as Record<string, unknown> | null)?.[field];
  if (!Array.isArray(list)) return { problem: field === undefined ? 'the answer is not a list' : `the answer has no '${field}' list` };
  return { pairs: list.map((entry) => [(entry as Record<string, unknown> | null)?.index, (entry as Record<string, unknown> | null)?.[scoreField]] as [unknown, unknown]) };
}

export const RERANK_SHAPES: Readonly<Record<RerankShape, ShapeOf>> = {
  cohere: {
    path: '/v2/rerank', defaultBaseURL: 'https://api.cohere.com', defaultKeyEnv: 'COHERE_API_KEY', needsModel: true,
    body: (query, documents, model) => ({ ...withModel(model), query, documents }),
    parse: (answer) => listOf(answer, 'results', 'relevance_score'),
  },
  jina: {
    path: '/v1/rerank', defaultBaseURL: 'https://api.jina.ai', defaultKeyEnv: 'JINA_API_KEY', needsModel: false,
    body: (query, documents, model) => ({ ...withModel(model), query, documents, return_documents: false }),
    parse: (answer) => listOf(answer, 'results', 'relevance_score'),
  },
  voyage: {
    path: '/v1/rerank', defaultBaseURL: 'https://api.voyageai.com', defaultKeyEnv: 'VOYAGE_API_KEY', needsModel: true,
    body: (query, documents, model) => ({ query, documents, ...withModel(model) }),
    parse: (answer) => listOf(answer, 'data', 'relevance_score'),
  },
  tei: {
    path: '/rerank', needsModel: false,
    body: (query, documents) => ({ query, texts: documents, truncate: true }),
    parse: (answer) => listOf(answer, undefined, 'score'),
  },
};

/**
 * One score per document in the documents' order, from an answer's pairs: every index an integer in
 * range exactly once, every score a finite number. Anything else is a sentence naming the fault (a
 * server answering for other documents must not reorder ours).
 */
export function scoresInOrder(pairs: readonly [unknown, unknown][], count: number): number[] | string {
  if (pairs.length !== count) return `answered ${pairs.length} scores for ${count} documents`;
  const scores = new Array<number | undefined>(count).fill(undefined);
  for (const [index, score] of pairs) {
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) return `answered the index ${JSON.stringify(index)}, outside 0..${count - 1}`;
    if (scores[index] !== undefined) return `answered the index ${index} twice`;
    if (typeof score !== 'number' || !Number.isFinite(score)) return `answered the score ${JSON.stringify(score)} for document ${index}`;
    scores[index] = score;
  }
  return scores as number[];
}
