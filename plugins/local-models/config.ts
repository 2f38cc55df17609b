/** `plugins.local-models.config` in quire.json (the manifest's config schema checks it before activation). */
export interface LocalModelsConfig {
  embedder?: EmbedderConfig;
  reranker?: RerankerConfig;
  /** Where `quire models pull` downloads from; default the Hugging Face Hub. */
  remoteHost?: string;
}

/** The ONNX weights file a model is loaded from: `onnx/model<suffix>.onnx` (transformers.js' names). */
export type ModelDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';

export const DTYPE_FILE_SUFFIX: ReadonlyMap<ModelDtype, string> = new Map([
  ['fp32', ''], ['fp16', '_fp16'], ['q8', '_quantized'], ['int8', '_int8'], ['uint8', '_uint8'], ['q4', '_q4'], ['q4f16', '_q4f16'], ['bnb4', '_bnb4'],
]);

export interface EmbedderConfig {
  /** Hub-style `org/name`, a folder under `<workspace>/models/`. */
  model: string;
  dtype?: ModelDtype;
  /** How token vectors become one vector: the model card says which (sentence-transformers: usually mean). */
  pooling?: 'mean' | 'cls';
  /** L2-normalise the vectors (default true): cosine and dot product then agree. */
  normalize?: boolean;
  /** Put before a query (`query: ` for E5, an instruction for BGE); default none. */
  queryPrefix?: string;
  /** Put before every document text (`passage: ` for E5); default none. */
  documentPrefix?: string;
  /** Texts per inference run (default 32). */
  batchSize?: number;
  /** Longer texts are cut to this many characters before tokenizing (the model truncates tokens anyway). */
  maxCharacters?: number;
  /** onnxruntime threads for one run; default one fewer than the cores (at least one). */
  threads?: number;
}

export interface RerankerConfig {
  model: string;
  dtype?: ModelDtype;
  /** Documents are cut to this many characters before tokenizing. */
  maxCharacters?: number;
  threads?: number;
}

export const DEFAULT_BATCH_SIZE = 32;
/** ~4 characters a token: past this, a 512-token model would truncate anyway. */
export const DEFAULT_EMBED_CHARACTERS = 4_000;
export const DEFAULT_RERANK_CHARACTERS = 2_000;
/** Query/document pairs per inference run of the reranker. */
export const RERANK_BATCH_SIZE = 16;
