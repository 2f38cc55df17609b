// The model's worker thread loads this module: errors come from core/errors.js, not the whole core index.
import type { PreTrainedModel, PreTrainedTokenizer, Tensor } from '@huggingface/transformers';
import { KernelError, isKernelError } from '../../core/errors.js';
import type { ModelDtype } from './config.js';
import { checkModelFolder } from './model-folder.js';
import { withTransformersEnv } from './transformers-env.js';

/**
 * Running a model, the same on a worker thread and on the main thread. Everything here works on plain
 * data (strings in, Float32Arrays out) so that it crosses a thread boundary unchanged.
 */
export interface ModelSpec {
  kind: 'embedder' | 'reranker';
  modelsDir: string;
  model: string;
  dtype?: ModelDtype;
  /** onnxruntime's threads for one run (intra-op); default onnxruntime's own (one per core). */
  threads?: number;
}

export interface EmbedOptions {
  pooling: 'mean' | 'cls';
  normalize: boolean;
}

/** Row-major vectors: `rows × dimensions` floats. */
export interface EmbedOutput {
  data: Float32Array;
  rows: number;
  dimensions: number;
}

export interface LoadedModel {
  embed(texts: string[], options: EmbedOptions): Promise<EmbedOutput>;
  score(query: string, documents: string[]): Promise<Float32Array>;
  dispose(): Promise<void>;
}

export async function loadModel(spec: ModelSpec): Promise<LoadedModel> {
  checkModelFolder(spec.modelsDir, spec.model, spec.dtype);
  try {
    return await withTransformersEnv({ modelsDir: spec.modelsDir }, async ({ AutoTokenizer, AutoModel, AutoModelForSequenceClassification }) => {
      const options = { dtype: spec.dtype ?? 'fp32', ...(spec.threads ? { session_options: { intraOpNumThreads: spec.threads } } : {}) } as const;
      const tokenizer = await AutoTokenizer.from_pretrained(spec.model);
      const model = spec.kind === 'embedder'
        ? await AutoModel.from_pretrained(spec.model, options)
        : await AutoModelForSequenceClassification.from_pretrained(spec.model, options);
      return new TransformersModel(tokenizer, model);
    });
  } catch (error) {
    if (isKernelError(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new KernelError('MODEL_UNAVAILABLE', `model '${spec.model}' could not be loaded from ${spec.modelsDir}: ${message}`, { details: { model: spec.model } });
  }
}

class TransformersModel implements LoadedModel {
  private readonly maxTokens: number | undefined;

  constructor(private readonly tokenizer: PreTrainedTokenizer, private readonly model: PreTrainedModel) {
    this.maxTokens = longestInput(tokenizer, model);
  }

  async embed(texts: string[], options: EmbedOptions): Promise<EmbedOutput> {
    const inputs = this.tokenizer(texts, { padding: true, truncation: true, ...this.limit() });
    const outputs = (await this.model(inputs)) as Record<string, Tensor | undefined>;
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings ?? outputs.logits;
    if (!hidden || hidden.dims.length !== 3) throw new KernelError('MODEL_UNAVAILABLE', 'the model gave no token vectors (last_hidden_state): is it an embedding model?');
    const [rows, tokens, dimensions] = hidden.dims as [number, number, number];
    const states = hidden.data as Float32Array;
    const mask = (inputs as { attention_mask: Tensor }).attention_mask.data as BigInt64Array;
    const data = new Float32Array(rows * dimensions);
    for (let row = 0; row < rows; row++) {
      const out = data.subarray(row * dimensions, (row + 1) * dimensions);
      if (options.pooling === 'cls') out.set(states.subarray(row * tokens * dimensions, row * tokens * dimensions + dimensions));
      else meanPool(states, mask, row, tokens, dimensions, out);
      if (options.normalize) normalize(out);
    }
    return { data, rows, dimensions };
  }

  async score(query: string, documents: string[]): Promise<Float32Array> {
    const inputs = this.tokenizer(new Array<string>(documents.length).fill(query), { text_pair: documents, padding: true, truncation: true, ...this.limit() });
    const { logits } = (await this.model(inputs)) as { logits?: Tensor };
    if (!logits || logits.dims.length !== 2 || logits.dims[0] !== documents.length) throw new KernelError('MODEL_UNAVAILABLE', 'the model gave no logits per pair: is it a cross-encoder (…ForSequenceClassification)?');
    return relevance(logits.data as Float32Array, documents.length, logits.dims[1] as number);
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }

  private limit(): { max_length?: number } {
    return this.maxTokens ? { max_length: this.maxTokens } : {};
  }
}

/**
 * The most tokens the model takes. transformers.js truncates to tokenizer_config.json's
 * model_max_length, which some exports leave at 1e30 (and it ignores tokenizer.json's truncation): a
 * long text then overruns the position embeddings and the run fails. So also bound it by the model's
 * max_position_embeddings (RoBERTa-like models number positions from 2: two fewer).
 */
function longestInput(tokenizer: PreTrainedTokenizer, model: PreTrainedModel): number | undefined {
  const config = model.config as { max_position_embeddings?: unknown; model_type?: unknown };
  const positions = typeof config.max_position_embeddings === 'number' ? config.max_position_embeddings - (/roberta|camembert/.test(String(config.model_type)) ? 2 : 0) : Infinity;
  const declared = typeof tokenizer.model_max_length === 'number' && tokenizer.model_max_length > 0 ? tokenizer.model_max_length : Infinity;
  const longest = Math.min(positions, declared);
  return Number.isFinite(longest) && longest > 0 ? longest : undefined;
}

/** The average of the token vectors that are not padding (attention mask 1). */
function meanPool(states: Float32Array, mask: BigInt64Array, row: number, tokens: number, dimensions: number, out: Float32Array): void {
  let count = 0;
  for (let token = 0; token < tokens; token++) {
    if (mask[row * tokens + token] === 0n) continue;
    count++;
    const at = (row * tokens + token) * dimensions;
    for (let d = 0; d < dimensions; d++) out[d]! += states[at + d]!;
  }
  if (count > 0) for (let d = 0; d < dimensions; d++) out[d]! /= count;
}

function normalize(vector: Float32Array): void {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
}

/**
 * One score per pair. One label: the logit itself (ms-marco, BGE rerankers). Two labels (not relevant,
 * relevant): their difference, which orders pairs as the softmax of "relevant" does.
 */
function relevance(logits: Float32Array, pairs: number, labels: number): Float32Array {
  if (labels === 1) return Float32Array.from(logits.subarray(0, pairs));
  if (labels === 2) return Float32Array.from({ length: pairs }, (_, pair) => logits[pair * 2 + 1]! - logits[pair * 2]!);
  throw new KernelError('MODEL_UNAVAILABLE', `the cross-encoder has ${labels} output labels; a reranker needs 1 (a relevance score) or 2 (not relevant, relevant)`);
}
