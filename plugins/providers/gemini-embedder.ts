import type { GoogleGenAI } from '@google/genai';
import { ModelError } from '../../core/turn/model-provider.js';
import { DEFAULT_BASE_URL, type EmbedderConfig } from './config.js';
import { withoutKey } from './errors.js';
import { VectorSize } from './vector-size.js';
import type { Embedder } from './tokens.js';

/** batchEmbedContents takes at most 100 requests. */
const DEFAULT_BATCH = 100;
/** A batch of short texts answers in well under a second; a stalled server must not hold the indexer. */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

type TaskType = 'RETRIEVAL_DOCUMENT' | 'RETRIEVAL_QUERY';

/**
 * Gemini embeddings through `@google/genai` (`models.embedContent`, which the Developer API sends as
 * `POST /v1beta/models/<model>:batchEmbedContents`). Documents are embedded with the task type
 * RETRIEVAL_DOCUMENT and queries with RETRIEVAL_QUERY, as Google advises for search; `dimensions` is
 * sent as `outputDimensionality`. Each answer is checked (one vector per text, one length for all).
 */
export class GeminiEmbedder implements Embedder {
  readonly id = 'gemini';
  private readonly size: VectorSize;
  /** Made on the first request: the SDK is imported then, not at every start of the kernel. */
  private client: Promise<GoogleGenAI> | undefined;

  constructor(private readonly config: EmbedderConfig, private readonly key: string) {
    this.size = new VectorSize(config.dimensions, 'Gemini');
  }

  get model(): string {
    return this.config.model;
  }

  get dimensions(): number {
    return this.size.value;
  }

  private connected(): Promise<GoogleGenAI> {
    this.client ??= import('@google/genai').then(
      // No SDK retries (no retryOptions): the indexer's backoff and circuit breaker decide.
      ({ GoogleGenAI }) => new GoogleGenAI({ apiKey: this.key, httpOptions: { baseUrl: this.config.baseURL ?? DEFAULT_BASE_URL.gemini, timeout: this.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS } }),
      (error: unknown) => { this.client = undefined; throw error; },
    );
    return this.client;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    // The API's own limit bounds a configured size too (the schema allows more for other servers): past it every batch failed with 400.
    const batch = Math.min(this.config.batchSize ?? DEFAULT_BATCH, DEFAULT_BATCH);
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batch) out.push(...await this.request(texts.slice(start, start + batch), 'RETRIEVAL_DOCUMENT', signal));
    return this.size.take(out);
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vector] = this.size.take(await this.request([text], 'RETRIEVAL_QUERY', signal));
    return vector!;
  }

  private async request(texts: readonly string[], taskType: TaskType, signal: AbortSignal | undefined): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const client = await this.connected();
    let embeddings: { values?: number[] }[] | undefined;
    try {
      const answer = await client.models.embedContent({
        model: this.config.model,
        // Contents, not bare strings: the SDK joins bare strings into one content (one vector) for some models.
        contents: texts.map((text) => ({ role: 'user', parts: [{ text }] })),
        config: { taskType, ...(this.config.dimensions ? { outputDimensionality: this.config.dimensions } : {}), ...(signal ? { abortSignal: signal } : {}) },
      });
      embeddings = answer.embeddings;
    } catch (error) {
      throw withoutKey(error, this.key, `the embedder at ${this.config.baseURL ?? DEFAULT_BASE_URL.gemini}`);
    }
    if (!Array.isArray(embeddings) || embeddings.length !== texts.length) {
      throw new ModelError('server', `Gemini answered ${Array.isArray(embeddings) ? embeddings.length : 'no'} embeddings for ${texts.length} texts`);
    }
    return embeddings.map((embedding, index) => this.checked(embedding.values, index));
  }

  private checked(values: unknown, index: number): Float32Array {
    if (!Array.isArray(values) || values.length === 0 || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw new ModelError('server', `Gemini answered no usable vector for text ${index}`);
    }
    return Float32Array.from(values as number[]);
  }
}
