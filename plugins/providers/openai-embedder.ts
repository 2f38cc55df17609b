import type OpenAI from 'openai';
import { ModelError } from '../../core/turn/model-provider.js';
import { DEFAULT_BASE_URL, type EmbedderConfig } from './config.js';
import { withoutKey } from './errors.js';
import { VectorSize } from './vector-size.js';
import type { Embedder } from './tokens.js';

const DEFAULT_BATCH = 64;
/**
 * One batch's whole answer, body included (the SDK's own timeout ends at the headers: a server that
 * stalled after them held the indexer's pass, and every later one, for ever), as Gemini's embedder's.
 */
const DEFAULT_BATCH_TIMEOUT_MS = 60_000;

/**
 * An OpenAI-compatible `/embeddings` endpoint. Texts go in batches of `batchSize`, in order; the answer
 * is checked (count, order by index, one size for all) so a misbehaving server cannot mix vectors up.
 */
export class OpenAIEmbedder implements Embedder {
  readonly id = 'openai';
  private reportedModel: string;
  private readonly size: VectorSize;
  /** Made on the first request: the SDK is imported then, not at every start of the kernel. */
  private client: Promise<OpenAI> | undefined;

  constructor(private readonly config: EmbedderConfig, private readonly key: string) {
    this.reportedModel = config.model;
    this.size = new VectorSize(config.dimensions, 'the embedder');
  }

  get model(): string {
    return this.reportedModel;
  }

  get configuredModel(): string {
    return this.config.model;
  }

  get dimensions(): number {
    return this.size.value;
  }

  private connected(): Promise<OpenAI> {
    this.client ??= import('./openai-client.js').then(
      ({ openAIClient }) => openAIClient(this.config, this.key),
      (error: unknown) => { this.client = undefined; throw error; },
    );
    return this.client;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const batch = this.config.batchSize ?? DEFAULT_BATCH;
    const out: Float32Array[] = [];
    const client = await this.connected();
    for (let start = 0; start < texts.length; start += batch) {
      const slice = texts.slice(start, start + batch);
      let answer: OpenAI.Embeddings.CreateEmbeddingResponse;
      const limitMs = this.config.requestTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS;
      const timeout = AbortSignal.timeout(limitMs);
      try {
        answer = await client.embeddings.create({
          model: this.config.model, input: slice, encoding_format: 'float',
          ...(this.config.dimensions ? { dimensions: this.config.dimensions } : {}),
        }, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      } catch (error) {
        if (timeout.aborted && !signal?.aborted) throw new ModelError('timeout', `the embedder did not answer within ${limitMs} ms`);
        throw withoutKey(error, this.key, `the embedder at ${this.config.baseURL ?? DEFAULT_BASE_URL.openai}`);
      }
      if (answer.data.length !== slice.length) throw new ModelError('server', `the embedder answered ${answer.data.length} vectors for ${slice.length} texts`);
      // Some compatible servers number no entry: then they are in the texts' order.
      const numbered = answer.data.some((entry) => typeof entry.index === 'number');
      const ordered = numbered ? [...answer.data].sort((a, b) => a.index - b.index) : answer.data.map((entry, index) => ({ ...entry, index }));
      // Each text's vector exactly once (indexes 0..n-1), of numbers: one answered twice, or with NaN in
      // it, was stored against another block's text or went into the vector index.
      ordered.forEach((entry, i) => {
        if (entry.index !== i) throw new ModelError('server', `the embedder answered no vector for text ${i} (indexes ${ordered.map((item) => item.index).slice(0, 8).join(', ')}…)`);
      });
      for (const entry of ordered) {
        if (!Array.isArray(entry.embedding) || !entry.embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
          throw new ModelError('server', `the embedder answered a vector for text ${entry.index} that is not all numbers`);
        }
        out.push(Float32Array.from(entry.embedding));
      }
      if (answer.model) this.reportedModel = answer.model;
    }
    return this.size.take(out);
  }
}
