// The onnx embedder and reranker over generated tiny models, on this thread (the sources under vitest;
// onnx-worker.test.ts runs the built module, which uses a worker thread): real files, no network.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../../plugins/local-models/onnx-embedder.js';
import { OnnxReranker } from '../../../plugins/local-models/onnx-reranker.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';

let root: string;
let modelsDir: string;
const fetched: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-local-models-'));
  modelsDir = join(root, 'models');
  await generateTinyBertModel(join(modelsDir, 'test', 'embedder'), { seed: 3 });
  await generateTinyBertModel(join(modelsDir, 'test', 'reranker'), { kind: 'cross-encoder', seed: 4 });
  await generateTinyBertModel(join(modelsDir, 'test', 'reranker-2'), { kind: 'cross-encoder', seed: 4, labels: 2, cjk: false });
  await generateTinyBertModel(join(modelsDir, 'test', 'reranker-3'), { kind: 'cross-encoder', seed: 4, labels: 3, cjk: false });
  // Whatever tried the network would go through env.fetch: it is recorded and fails.
  env.fetch = async (input: string | URL) => {
    fetched.push(String(input));
    throw new Error(`network access while loading a local model: ${String(input)}`);
  };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const norm = (vector: Float32Array): number => Math.hypot(...vector);
const differ = (a: Float32Array, b: Float32Array): boolean => a.some((value, index) => Math.abs(value - b[index]!) > 1e-4);
const paragraphs = Array.from({ length: 40 }, (_, index) => `note ${index}: the quick brown fox ${'jumps over the lazy dog '.repeat(index % 5 + 1)}`);

describe('the onnx embedder', () => {
  it('knows its dimension from config.json before the first call, and embeds into unit vectors of that length', async () => {
    const embedder = new OnnxEmbedder({ model: 'test/embedder' }, modelsDir);
    try {
      expect([embedder.id, embedder.model, embedder.dimensions]).toEqual(['onnx', 'test/embedder', 32]);
      const vectors = await embedder.embed(['hello world', '向量搜索的笔记', '你好，世界']);
      expect(vectors).toHaveLength(3);
      for (const vector of vectors) {
        expect(vector).toBeInstanceOf(Float32Array);
        expect(vector).toHaveLength(32);
        expect(vector.every(Number.isFinite)).toBe(true);
        expect(norm(vector)).toBeCloseTo(1, 5);
      }
      expect(differ(vectors[0]!, vectors[1]!) && differ(vectors[1]!, vectors[2]!)).toBe(true);
      expect(fetched).toEqual([]);
    } finally {
      await embedder.dispose();
    }
  });

  it('is deterministic and keeps the order across batches: a text gets the same vector alone, in any batch, at any position', async () => {
    const embedder = new OnnxEmbedder({ model: 'test/embedder', batchSize: 7 }, modelsDir);
    try {
      const all = await embedder.embed(paragraphs);
      expect(all).toHaveLength(paragraphs.length);
      const reversed = await embedder.embed([...paragraphs].reverse());
      reversed.reverse();
      for (let index = 0; index < paragraphs.length; index++) {
        expect(differ(all[index]!, reversed[index]!)).toBe(false);
      }
      const [alone] = await embedder.embed([paragraphs[13]!]);
      expect(differ(alone!, all[13]!)).toBe(false);
      expect(await embedder.embed([])).toEqual([]);
    } finally {
      await embedder.dispose();
    }
  });

  it('adds the query and document prefixes, pools by [CLS] when asked, and leaves vectors unnormalised when asked', async () => {
    const plain = new OnnxEmbedder({ model: 'test/embedder' }, modelsDir);
    const prefixed = new OnnxEmbedder({ model: 'test/embedder', queryPrefix: 'query: ', documentPrefix: 'passage: ' }, modelsDir);
    const cls = new OnnxEmbedder({ model: 'test/embedder', pooling: 'cls', normalize: false }, modelsDir);
    try {
      const [query] = await plain.embed(['query: semantic search']);
      expect(differ(await prefixed.embedQuery('semantic search'), query!)).toBe(false);
      const [passage] = await plain.embed(['passage: semantic search']);
      expect(differ((await prefixed.embed(['semantic search']))[0]!, passage!)).toBe(false);
      expect(differ(await plain.embedQuery('semantic search'), passage!)).toBe(true);
      const [raw] = await cls.embed(['semantic search']);
      expect(Math.abs(norm(raw!) - 1)).toBeGreaterThan(1e-3);
    } finally {
      await Promise.all([plain.dispose(), prefixed.dispose(), cls.dispose()]);
    }
  });

  it('ends a run before its padded size passes about 16,000 tokens, whatever batchSize says, keeping the order', async () => {
    const runs: number[] = [];
    const runner = {
      async embed(texts: string[]) {
        runs.push(texts.length);
        // Each text's vector holds its number, to check the order.
        return { data: Float32Array.from(texts.map((text) => Number(text.split(' ')[0]))), rows: texts.length, dimensions: 1 };
      },
      async score() { return new Float32Array(); },
      async dispose() { /* nothing held */ },
    };
    const embedder = new OnnxEmbedder({ model: 'test/embedder', batchSize: 1024 }, modelsDir, runner);
    const long = Array.from({ length: 200 }, (_, i) => `${i} ${'word '.repeat(400)}`);
    const vectors = await embedder.embed(long);
    expect(Math.max(...runs)).toBeLessThanOrEqual(40);
    expect(vectors.map((vector) => vector[0])).toEqual(long.map((_, i) => i));
    runs.length = 0;
    await embedder.embed(Array.from({ length: 300 }, (_, i) => `${i} short`));
    expect(runs).toEqual([300]);
  });

  it('cuts texts longer than maxCharacters before tokenizing', async () => {
    const embedder = new OnnxEmbedder({ model: 'test/embedder', maxCharacters: 20 }, modelsDir);
    try {
      const [long, cut] = await embedder.embed(['hello world and then a great deal more text', 'hello world and then']);
      expect(differ(long!, cut!)).toBe(false);
    } finally {
      await embedder.dispose();
    }
  });

  it('embeds a text longer than the model takes even when tokenizer_config.json sets no real limit (model_max_length 1e30)', async () => {
    const folder = join(modelsDir, 'test', 'no-limit');
    await generateTinyBertModel(folder, { seed: 3, cjk: false, maxTokens: 64 });
    const file = join(folder, 'tokenizer_config.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')) as object, model_max_length: 1e30 }));
    const embedder = new OnnxEmbedder({ model: 'test/no-limit' }, modelsDir);
    try {
      const [long, longer] = await embedder.embed(['word '.repeat(200), 'word '.repeat(400)]);
      // Both cut at the model's 64 positions: the same tokens, the same vector.
      expect(differ(long!, longer!)).toBe(false);
    } finally {
      await embedder.dispose();
    }
  });

  it('says which folder is missing and how to get the model, without touching the network', async () => {
    const embedder = new OnnxEmbedder({ model: 'nobody/absent-model' }, modelsDir);
    expect(embedder.dimensions).toBe(0);
    const error = await embedder.embed(['text']).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect((error as Error).message).toContain(join(modelsDir, 'nobody', 'absent-model'));
    expect((error as Error).message).toContain('quire models pull nobody/absent-model');
    expect(fetched).toEqual([]);
  });

  it('refuses a model id that would be a path out of the models folder', () => {
    for (const model of ['../outside', '/etc/passwd', 'a/../../b', 'org/..', 'just-a-name', 'a/b/c']) {
      expect(() => new OnnxEmbedder({ model }, modelsDir), model).toThrowError(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
  });
});

describe('the onnx reranker', () => {
  const query = 'semantic search over notes';
  const documents = ['a vector index for notes', 'a recipe for bread', '语义搜索', query, 'the quick brown fox', 'semantic'];

  it('gives one finite score per document, in the documents\' order, the same on every call', async () => {
    const reranker = new OnnxReranker({ model: 'test/reranker' }, modelsDir);
    try {
      expect([reranker.id, reranker.model]).toEqual(['onnx', 'test/reranker']);
      const scores = await reranker.rerank(query, documents);
      expect(scores).toHaveLength(documents.length);
      expect(scores.every(Number.isFinite)).toBe(true);
      expect(new Set(scores.map((score) => score.toFixed(5))).size).toBe(documents.length);
      expect(await reranker.rerank(query, documents)).toEqual(scores);
      // Each document's score is its own: the same in another order, alone, or past a batch boundary.
      const reversed = await reranker.rerank(query, [...documents].reverse());
      expect(reversed.reverse().map((score) => score.toFixed(4))).toEqual(scores.map((score) => score.toFixed(4)));
      const many = await reranker.rerank(query, Array.from({ length: 40 }, (_, index) => documents[index % documents.length]!));
      expect(many.map((score) => score.toFixed(4))).toEqual(Array.from({ length: 40 }, (_, index) => scores[index % documents.length]!.toFixed(4)));
      expect(await reranker.rerank(query, [])).toEqual([]);
      expect(fetched).toEqual([]);
    } finally {
      await reranker.dispose();
    }
  });

  it('keeps a long query short, so that the documents stay in the model\'s window and are told apart', async () => {
    const reranker = new OnnxReranker({ model: 'test/reranker' }, modelsDir);
    try {
      // 2,000 characters: cut from the pair's end to the model's 128 tokens, the query left no room for any document.
      const long = `${query} `.repeat(80).slice(0, 2_000);
      const scores = await reranker.rerank(long, documents.slice(0, 3));
      expect(new Set(scores.map((score) => score.toFixed(5))).size).toBe(3);
    } finally {
      await reranker.dispose();
    }
  });

  it('scores a two-label cross-encoder (not relevant, relevant) by the difference of its logits, and refuses more labels', async () => {
    const two = new OnnxReranker({ model: 'test/reranker-2' }, modelsDir);
    const three = new OnnxReranker({ model: 'test/reranker-3' }, modelsDir);
    try {
      const { AutoModelForSequenceClassification, AutoTokenizer } = await import('@huggingface/transformers');
      env.allowRemoteModels = false;
      env.localModelPath = modelsDir;
      const tokenizer = await AutoTokenizer.from_pretrained('test/reranker-2');
      const model = await AutoModelForSequenceClassification.from_pretrained('test/reranker-2', { dtype: 'fp32' });
      const { logits } = await model(tokenizer([query, query], { text_pair: documents.slice(0, 2), padding: true, truncation: true })) as { logits: { data: Float32Array } };
      await model.dispose();
      const expected = [logits.data[1]! - logits.data[0]!, logits.data[3]! - logits.data[2]!];
      expect((await two.rerank(query, documents.slice(0, 2))).map((score) => score.toFixed(5))).toEqual(expected.map((score) => score.toFixed(5)));
      await expect(three.rerank(query, documents)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('3 output labels') });
    } finally {
      await Promise.all([two.dispose(), three.dispose()]);
    }
  });

  it('says which folder is missing', async () => {
    const reranker = new OnnxReranker({ model: 'nobody/absent-reranker' }, modelsDir);
    await expect(reranker.rerank('q', ['d'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('quire models pull nobody/absent-reranker') });
  });
});
