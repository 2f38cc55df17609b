import { firstCodePoints, KernelError } from '../../core/index.js';
import { ModelError } from '../../core/turn/model-provider.js';
import { keyInVariableName, looksLikeKey, type RerankerConfig } from './config.js';
import { maskKey, toModelError, withoutKey } from './errors.js';
import { RERANK_SHAPES, scoresInOrder, type ShapeOf } from './rerank-shapes.js';
import type { Reranker } from './tokens.js';

const FIELD = 'plugins/providers/config/reranker';
/** SiYuan's default: a reranker that has not answered in 30 s will not help a search waiting for it. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** An answer is a few bytes per document; anything this large is not one. */
const MAX_ANSWER_BYTES = 4_000_000;

/**
 * An HTTP `/rerank` endpoint in one of the dialects of rerank-shapes.ts, through global `fetch` (so the
 * egress guard sees it) with a time limit per request. Answers one score per document in order, or
 * rejects: a count mismatch, an index out of range or given twice, a score that is not a number.
 */
export class HttpReranker implements Reranker {
  readonly id = 'http';
  private readonly shape: ShapeOf;
  private readonly url: string;

  constructor(private readonly config: RerankerConfig, private readonly key: string | undefined) {
    this.shape = RERANK_SHAPES[config.shape];
    const base = config.baseURL ?? this.shape.defaultBaseURL;
    if (!base) throw new KernelError('CONFIG_INVALID', `${FIELD}/baseURL: a ${config.shape} reranker has no default address; set the server's, e.g. http://127.0.0.1:8080`, { details: { field: `${FIELD}/baseURL` } });
    if (this.shape.needsModel && !config.model) throw new KernelError('CONFIG_INVALID', `${FIELD}/model: the ${config.shape} rerank API needs a model`, { details: { field: `${FIELD}/model` } });
    this.url = `${base.replace(/\/+$/, '')}${this.shape.path}`;
  }

  get model(): string {
    return this.config.model ?? `${this.config.shape} server`;
  }

  async rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[]> {
    if (documents.length === 0) return [];
    const limit = this.config.maxCharacters;
    const sent = limit === undefined ? documents : documents.map((text) => firstCodePoints(text, limit));
    const timeout = AbortSignal.timeout(this.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let text: string;
    let status: number;
    try {
      const response = await fetch(this.url, {
        method: 'POST', signal: combined,
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.key ? { authorization: `Bearer ${this.key}` } : {}) },
        body: JSON.stringify(this.shape.body(query, sent, this.config.model)),
      });
      status = response.status;
      const read = await boundedText(response, MAX_ANSWER_BYTES);
      if (read === undefined) throw new ModelError('server', `the reranker answered more than ${MAX_ANSWER_BYTES} bytes, not a rerank answer`);
      text = read;
      // The key masked before the text is cut: cut first, a key echoed across the cut lost only its tail,
      // and the rest went on to the agent's model, the session and the log.
      if (!response.ok) throw toModelError({ status, headers: response.headers, message: `the reranker answered HTTP ${status}: ${maskKey(text, this.key).slice(0, 300)}` });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new ModelError('timeout', `the reranker did not answer within ${this.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS} ms`);
      throw withoutKey(error, this.key, `the reranker at ${this.url}`);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new ModelError('server', `the reranker answered something that is not JSON: ${maskKey(text, this.key).slice(0, 100)}`);
    }
    const parsed = this.shape.parse(answer);
    if ('problem' in parsed) throw new ModelError('server', `the ${this.config.shape} reranker's answer is not its shape: ${parsed.problem}`);
    const scores = scoresInOrder(parsed.pairs, documents.length);
    if (typeof scores === 'string') throw new ModelError('server', `the reranker ${scores}`);
    return scores;
  }
}


/** The key from the variable the config names, or the shape's usual one; TEI takes none unless named. */
export function rerankerKey(config: RerankerConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (config.apiKeyEnv === false) return undefined;
  const variable = config.apiKeyEnv ?? RERANK_SHAPES[config.shape].defaultKeyEnv;
  if (variable === undefined) return undefined;
  if (looksLikeKey(variable, env)) throw keyInVariableName(FIELD);
  const key = env[variable]?.trim();
  if (!key) {
    throw new KernelError('MODEL_UNAVAILABLE', `the ${config.shape} reranker's key is missing: set the environment variable ${variable} (named by ${FIELD}/apiKeyEnv), or set apiKeyEnv to false for a server that takes none`, { details: { field: `${FIELD}/apiKeyEnv`, variable } });
  }
  return key;
}

/**
 * The answer's text, or undefined past `limit` bytes, read no further (a server sending gigabytes within
 * the time limit was read whole before its length was checked).
 */
async function boundedText(response: Response, limit: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    bytes += value.byteLength;
    if (bytes > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
