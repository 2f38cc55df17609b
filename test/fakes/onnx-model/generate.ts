// Writes a model folder that @huggingface/transformers loads from disk like a Hugging Face BERT export:
// config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (the fp32 file name; dtype 'fp32').
// No weights can be downloaded here, so tests of the local embedder and the local reranker use these.
//
//   await generateTinyBertModel(join(root, 'tiny-embedder'));
//   env.allowRemoteModels = false; env.localModelPath = root;
//   const extract = await pipeline('feature-extraction', 'tiny-embedder', { dtype: 'fp32' });
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBertModel } from './bert-graph.js';
import { encodeModel } from './onnx-proto.js';
import { buildVocabulary, tokenizerConfigJson, tokenizerJson } from './wordpiece-tokenizer.js';

export interface TinyBertOptions {
  /** 'embedder' (BertModel: last_hidden_state) or 'cross-encoder' (BertForSequenceClassification: logits). */
  kind?: 'embedder' | 'cross-encoder';
  /** Hidden size: the dimension of the embeddings. Default 32. */
  dimensions?: number;
  /** Encoder layers. Default 1. */
  layers?: number;
  /** Longest input in tokens (position embeddings and the tokenizer's truncation). Default 128. */
  maxTokens?: number;
  /** The weights are a function of the seed alone. Default 15. */
  seed?: number;
  /** Put the 20,992 CJK ideographs in the vocabulary (larger file). Default true. */
  cjk?: boolean;
  /** Output labels of the cross-encoder. Default 1: one relevance score per pair. */
  labels?: number;
}

export interface GeneratedModel {
  dir: string;
  kind: 'embedder' | 'cross-encoder';
  dimensions: number;
  vocabularySize: number;
  maxTokens: number;
  /** Paths relative to dir. */
  files: string[];
}

export async function generateTinyBertModel(dir: string, options: TinyBertOptions = {}): Promise<GeneratedModel> {
  const kind = options.kind ?? 'embedder';
  const dimensions = options.dimensions ?? 32;
  const layers = options.layers ?? 1;
  const maxTokens = options.maxTokens ?? 128;
  const labels = options.labels ?? 1;
  const vocabulary = buildVocabulary({ cjk: options.cjk ?? true });

  const model = buildBertModel({
    vocabSize: vocabulary.length,
    hiddenSize: dimensions,
    intermediateSize: dimensions * 2,
    layers,
    maxPositions: maxTokens,
    typeVocabSize: 2,
    head: kind === 'embedder' ? { kind: 'embeddings' } : { kind: 'classification', labels },
    seed: options.seed ?? 15,
  });

  const config: Record<string, unknown> = {
    architectures: [kind === 'embedder' ? 'BertModel' : 'BertForSequenceClassification'],
    model_type: 'bert',
    vocab_size: vocabulary.length,
    hidden_size: dimensions,
    num_hidden_layers: layers,
    num_attention_heads: 1,
    intermediate_size: dimensions * 2,
    hidden_act: 'tanh',
    max_position_embeddings: maxTokens,
    type_vocab_size: 2,
    layer_norm_eps: 1e-12,
    pad_token_id: 0,
  };
  if (kind === 'cross-encoder') {
    const labelNames = Array.from({ length: labels }, (_, index) => `LABEL_${index}`);
    config.id2label = Object.fromEntries(labelNames.map((name, index) => [String(index), name]));
    config.label2id = Object.fromEntries(labelNames.map((name, index) => [name, index]));
  }

  await mkdir(join(dir, 'onnx'), { recursive: true });
  const files = new Map<string, string | Uint8Array>([
    ['config.json', JSON.stringify(config, null, 2)],
    ['tokenizer.json', JSON.stringify(tokenizerJson(vocabulary, maxTokens))],
    ['tokenizer_config.json', JSON.stringify(tokenizerConfigJson(maxTokens), null, 2)],
    ['onnx/model.onnx', encodeModel(model)],
  ]);
  for (const [name, content] of files) await writeFile(join(dir, name), content);
  return { dir, kind, dimensions, vocabularySize: vocabulary.length, maxTokens, files: [...files.keys()] };
}
