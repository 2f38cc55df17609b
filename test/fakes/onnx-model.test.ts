// The generated tiny BERT models load in the real @huggingface/transformers with remote loading off, and
// behave like an embedder (fixed dimension, deterministic, normalized on request, padding-independent) and
// a cross-encoder (one score per text pair).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoModelForSequenceClassification, AutoTokenizer, env, pipeline, type Tensor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTinyBertModel } from './onnx-model/generate.js';
import { SPECIAL_TOKENS } from './onnx-model/wordpiece-tokenizer.js';

const texts = ['hello world', 'the quick brown fox jumps over the lazy dog', '你好，世界', '向量搜索的笔记'];

let root: string;
let remoteFetches: string[];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-onnx-model-'));
  await generateTinyBertModel(join(root, 'embedder-a'), { seed: 7 });
  await generateTinyBertModel(join(root, 'embedder-a-again'), { seed: 7 });
  await generateTinyBertModel(join(root, 'embedder-b'), { seed: 8 });
  await generateTinyBertModel(join(root, 'embedder-48'), { seed: 7, dimensions: 48, layers: 2 });
  await generateTinyBertModel(join(root, 'reranker'), { kind: 'cross-encoder', seed: 9 });

  env.allowRemoteModels = false;
  env.localModelPath = root;
  env.cacheDir = join(root, '.cache');
  // Anything that tried the network would go through env.fetch: record it, and fail it.
  remoteFetches = [];
  env.fetch = async (input: string | URL) => {
    remoteFetches.push(String(input));
    throw new Error(`network access in an offline test: ${String(input)}`);
  };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function embed(modelId: string, inputs: string[], normalize: boolean): Promise<number[][]> {
  const extract = await pipeline('feature-extraction', modelId, { dtype: 'fp32' });
  try {
    const output: Tensor = await extract(inputs, { pooling: 'mean', normalize });
    return output.tolist() as number[][];
  } finally {
    await extract.dispose();
  }
}

const norm = (vector: number[]) => Math.hypot(...vector);
const maxDifference = (a: number[], b: number[]) => Math.max(...a.map((value, index) => Math.abs(value - (b[index] ?? NaN))));

describe('generated tiny BERT embedder', () => {
  it('loads offline from the model folder and embeds English and Chinese texts into distinct unit vectors of the configured dimension', async () => {
    const vectors = await embed('embedder-a', texts, true);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) {
      expect(vector).toHaveLength(32);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    for (let i = 0; i < vectors.length; i++) {
      for (let j = i + 1; j < vectors.length; j++) expect(maxDifference(vectors[i]!, vectors[j]!)).toBeGreaterThan(1e-3);
    }
    expect(remoteFetches).toEqual([]);
  });

  it('reads Chinese as known ideographs, not as unknown tokens', async () => {
    const tokenizer = await AutoTokenizer.from_pretrained('embedder-a');
    const ids = tokenizer.encode('向量搜索');
    const unknownId = SPECIAL_TOKENS.indexOf('[UNK]');
    expect(ids).toHaveLength(6); // [CLS] + four ideographs + [SEP]
    expect(ids).not.toContain(unknownId);
  });

  it('is deterministic: the same seed writes the same bytes and gives the same vectors; another seed gives others', async () => {
    const fileA = await readFile(join(root, 'embedder-a', 'onnx', 'model.onnx'));
    const fileAgain = await readFile(join(root, 'embedder-a-again', 'onnx', 'model.onnx'));
    expect(fileAgain.equals(fileA)).toBe(true);

    const first = await embed('embedder-a', texts, true);
    const again = await embed('embedder-a-again', texts, true);
    const otherSeed = await embed('embedder-b', texts, true);
    expect(again).toEqual(first);
    expect(maxDifference(otherSeed[0]!, first[0]!)).toBeGreaterThan(1e-3);
  });

  it('leaves vectors unnormalized unless asked, and honours the configured dimension', async () => {
    const raw = await embed('embedder-a', texts.slice(0, 2), false);
    expect(raw.some((vector) => Math.abs(norm(vector) - 1) > 1e-2)).toBe(true);
    const wide = await embed('embedder-48', texts, true);
    expect(wide.map((vector) => vector.length)).toEqual([48, 48, 48, 48]);
  });

  it('masks padding: a short text embeds the same alone and batched with a longer one', async () => {
    const [alone] = await embed('embedder-a', ['hello world'], true);
    const [batched] = await embed('embedder-a', ['hello world', 'a much longer text that pads the short one in the batch'], true);
    expect(maxDifference(alone!, batched!)).toBeLessThan(1e-5);
  });

  it('writes nothing to the cache folder when loading from disk', async () => {
    const cacheEntries = await readdir(env.cacheDir ?? '').catch(() => []);
    expect(cacheEntries).toEqual([]);
  });
});

describe('generated tiny cross-encoder', () => {
  it('scores text pairs: one logit per pair, deterministic, different for different documents', async () => {
    const tokenizer = await AutoTokenizer.from_pretrained('reranker');
    const model = await AutoModelForSequenceClassification.from_pretrained('reranker', { dtype: 'fp32' });
    try {
      const query = 'semantic search';
      const documents = ['vector index for notes', 'a recipe for bread', '语义搜索'];
      const score = async () => {
        const inputs = tokenizer(new Array(documents.length).fill(query), { text_pair: documents, padding: true, truncation: true });
        const { logits } = (await model(inputs)) as { logits: Tensor };
        return { dims: logits.dims, scores: Array.from(logits.data as Float32Array), typeIds: (inputs.token_type_ids?.tolist() ?? []) as bigint[][] };
      };
      const first = await score();
      expect(first.dims).toEqual([3, 1]);
      expect(first.scores.every(Number.isFinite)).toBe(true);
      expect(new Set(first.scores.map((value) => value.toFixed(6))).size).toBe(3);
      // The second segment is marked as such, as a BERT cross-encoder expects.
      expect(first.typeIds[0]).toContain(1n);
      expect((await score()).scores).toEqual(first.scores);
    } finally {
      await model.dispose();
    }
    expect(remoteFetches).toEqual([]);
  });
});
