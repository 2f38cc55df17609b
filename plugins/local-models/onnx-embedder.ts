import type { Embedder } from '../../core/backends/contracts.js';
import { wholeCharacterEnd } from '../../core/util/code-points.js';
import { DEFAULT_BATCH_SIZE, DEFAULT_EMBED_CHARACTERS, type EmbedderConfig } from './config.js';
import type { EmbedOptions } from './inference.js';
import { modelFolder, readModelShape } from './model-folder.js';
import { createModelRunner, type ModelRunner } from './model-runner.js';

/**
 * The `onnx` embedder: a sentence-embedding model from `<workspace>/models/<org>/<name>/`, run locally
 * (nothing leaves the machine). The model is loaded on the first call, not when the kernel starts.
 */
export class OnnxEmbedder implements Embedder {
  readonly id = 'onnx';
  readonly model: string;
  private learnt: number;
  private readonly runner: ModelRunner;
  private readonly options: EmbedOptions;
  private readonly batchSize: number;
  private readonly maxCharacters: number;

  constructor(private readonly config: EmbedderConfig, private readonly modelsDir: string, runner?: ModelRunner) {
    this.model = config.model;
    this.runner = runner ?? createModelRunner({ kind: 'embedder', modelsDir, model: config.model, ...(config.dtype ? { dtype: config.dtype } : {}), ...(config.threads ? { threads: config.threads } : {}) });
    this.options = { pooling: config.pooling ?? 'mean', normalize: config.normalize ?? true };
    this.batchSize = config.batchSize ?? DEFAULT_BATCH_SIZE;
    this.maxCharacters = config.maxCharacters ?? DEFAULT_EMBED_CHARACTERS;
    // The hidden size of config.json is the vectors' length (pooling keeps it); a model not there yet
    // says 0 until it is, or until the first answer.
    this.learnt = readModelShape(modelFolder(modelsDir, config.model)).hiddenSize ?? 0;
  }

  get dimensions(): number {
    if (this.learnt === 0) this.learnt = readModelShape(modelFolder(this.modelsDir, this.model)).hiddenSize ?? 0;
    return this.learnt;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.run(texts.map((text) => this.prepared(this.config.documentPrefix, text)), signal);
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    // Urgent: someone waits for the answer, the indexer's batches do not.
    const [vector] = await this.run([this.prepared(this.config.queryPrefix, text)], signal, true);
    return vector!;
  }

  dispose(): Promise<void> {
    return this.runner.dispose();
  }

  private prepared(prefix: string | undefined, text: string): string {
    const cut = text.length > this.maxCharacters ? cutAt(text, this.maxCharacters) : text;
    return prefix ? prefix + cut : cut;
  }

  private async run(texts: string[], signal?: AbortSignal, urgent = false): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length;) {
      signal?.throwIfAborted();
      const end = batchEnd(texts, start, this.batchSize);
      const { data, rows, dimensions } = await this.runner.embed(texts.slice(start, end), this.options, signal, urgent);
      start = end;
      this.learnt = dimensions;
      for (let row = 0; row < rows; row++) vectors.push(data.slice(row * dimensions, (row + 1) * dimensions));
    }
    return vectors;
  }
}

/**
 * A run's texts are padded to its longest: a batch ends before its padded size passes this many
 * characters (about 16,000 tokens), whatever batchSize says. 1,024 texts of 512 tokens took about 13 GB
 * for one layer's attention, in the kernel's own process (onnxruntime's memory is not the worker's).
 */
const MAX_PADDED_CHARACTERS = 65_536;

/** Where the batch starting at `start` ends: at most `size` texts, and at most MAX_PADDED_CHARACTERS padded. */
export function batchEnd(texts: readonly string[], start: number, size: number): number {
  let longest = 0;
  let end = start;
  while (end < texts.length && end - start < size) {
    const next = Math.max(longest, texts[end]!.length);
    if (end > start && next * (end - start + 1) > MAX_PADDED_CHARACTERS) break;
    longest = next;
    end++;
  }
  return end;
}

/** Cuts at `limit` UTF-16 units without splitting a surrogate pair (a CJK extension character, an emoji). */
export function cutAt(text: string, limit: number): string {
  return text.slice(0, wholeCharacterEnd(text, limit));
}
