import type { Reranker } from '../../core/backends/contracts.js';
import { DEFAULT_RERANK_CHARACTERS, RERANK_BATCH_SIZE, type RerankerConfig } from './config.js';
import { createModelRunner, type ModelRunner } from './model-runner.js';
import { cutAt } from './onnx-embedder.js';

/** About 128 tokens: a search query rarely needs more, and the document keeps the rest of the window. */
const MAX_QUERY_TOKENS = 128;

/**
 * How many characters of `query` make about MAX_QUERY_TOKENS: a CJK character is about a token, other
 * text about four characters a token (500 characters of Chinese would fill a 512-token window alone).
 */
function queryLength(query: string): number {
  let tokens = 0;
  for (let i = 0; i < query.length; i++) {
    tokens += query.charCodeAt(i) >= 0x2e80 ? 1 : 0.25;
    if (tokens > MAX_QUERY_TOKENS) return i;
  }
  return query.length;
}

/**
 * The `onnx` reranker: a cross-encoder (…ForSequenceClassification) from `<workspace>/models/`, reading
 * the query and each document together and giving the pair one relevance score. Local: nothing leaves
 * the machine. Loaded on the first call.
 */
export class OnnxReranker implements Reranker {
  readonly id = 'onnx';
  readonly model: string;
  private readonly runner: ModelRunner;
  private readonly maxCharacters: number;

  constructor(config: RerankerConfig, modelsDir: string, runner?: ModelRunner) {
    this.model = config.model;
    this.runner = runner ?? createModelRunner({ kind: 'reranker', modelsDir, model: config.model, ...(config.dtype ? { dtype: config.dtype } : {}), ...(config.threads ? { threads: config.threads } : {}) });
    this.maxCharacters = config.maxCharacters ?? DEFAULT_RERANK_CHARACTERS;
  }

  async rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[]> {
    const cut = documents.map((document) => (document.length > this.maxCharacters ? cutAt(document, this.maxCharacters) : document));
    // The pair is cut from its end to the model's length: a long query (up to the documents' length)
    // pushed every document out of a 512-token window and made all scores equal. A query is kept short.
    const queryCharacters = Math.min(queryLength(query), this.maxCharacters);
    const question = query.length > queryCharacters ? cutAt(query, queryCharacters) : query;
    const scores: number[] = [];
    for (let start = 0; start < cut.length; start += RERANK_BATCH_SIZE) {
      signal?.throwIfAborted();
      const batch = await this.runner.score(question, cut.slice(start, start + RERANK_BATCH_SIZE), signal);
      scores.push(...batch);
    }
    return scores;
  }

  dispose(): Promise<void> {
    return this.runner.dispose();
  }
}
