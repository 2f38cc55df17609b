// The built module runs models on a worker thread (inference is synchronous native code: a batch would
// stop the kernel's event loop for its whole length). Same answers as on this thread; dispose ends it.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../../plugins/local-models/onnx-embedder.js';
import { OnnxReranker } from '../../../plugins/local-models/onnx-reranker.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { REPO_ROOT } from '../../helpers/harness.js';

const BUILT = join(REPO_ROOT, 'dist', 'plugins', 'local-models');

interface Built {
  OnnxEmbedder: typeof OnnxEmbedder;
  OnnxReranker: typeof OnnxReranker;
}

let root: string;
let modelsDir: string;
let built: Built;

beforeAll(async () => {
  expect(existsSync(join(BUILT, 'inference-worker.js'))).toBe(true);
  root = await mkdtemp(join(tmpdir(), 'quire-local-models-worker-'));
  modelsDir = join(root, 'models');
  await generateTinyBertModel(join(modelsDir, 'test', 'embedder'), { seed: 3 });
  await generateTinyBertModel(join(modelsDir, 'test', 'reranker'), { kind: 'cross-encoder', seed: 4 });
  built = {
    ...(await import(pathToFileURL(join(BUILT, 'onnx-embedder.js')).href) as Pick<Built, 'OnnxEmbedder'>),
    ...(await import(pathToFileURL(join(BUILT, 'onnx-reranker.js')).href) as Pick<Built, 'OnnxReranker'>),
  };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const threads = async (): Promise<number> => (await readdir('/proc/self/task')).length;

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const texts = ['hello world', '向量搜索的笔记', 'the quick brown fox jumps over the lazy dog', ''];

describe('local models on a worker thread (the built kernel)', () => {
  it('embeds on a worker exactly as on this thread, and releases the thread on dispose', async () => {
    const here = new OnnxEmbedder({ model: 'test/embedder', batchSize: 3 }, modelsDir);
    const fromHere = await here.embed(texts);
    // Counted once this thread's own inference threads are there (onnxruntime keeps its pool).
    const before = await threads();
    const onWorker = new built.OnnxEmbedder({ model: 'test/embedder', batchSize: 3 }, modelsDir);
    try {
      const fromWorker = await onWorker.embed(texts);
      expect(await threads()).toBeGreaterThan(before);
      expect(fromWorker.map((vector) => vector.length)).toEqual([32, 32, 32, 32]);
      for (let index = 0; index < texts.length; index++) {
        expect(Array.from(fromWorker[index]!).map((value) => value.toFixed(5))).toEqual(Array.from(fromHere[index]!).map((value) => value.toFixed(5)));
      }
      expect(onWorker.dimensions).toBe(32);
    } finally {
      await here.dispose();
      await onWorker.dispose();
    }
    await eventually(async () => (await threads()) <= before);
  });

  it('answers calls made at once, each with its own vectors', async () => {
    const embedder = new built.OnnxEmbedder({ model: 'test/embedder' }, modelsDir);
    try {
      const answers = await Promise.all(texts.map((text) => embedder.embed([text])));
      const together = await embedder.embed(texts);
      for (let index = 0; index < texts.length; index++) expect(Array.from(answers[index]![0]!)).toEqual(Array.from(together[index]!));
    } finally {
      await embedder.dispose();
    }
  });

  it('runs a search query before the indexer\'s batches that wait, after the one that runs', async () => {
    const embedder = new built.OnnxEmbedder({ model: 'test/embedder' }, modelsDir);
    try {
      await embedder.embed(['load the model first']);
      const finished: string[] = [];
      const track = (name: string, promise: Promise<unknown>) => promise.then(() => finished.push(name));
      await Promise.all([
        track('batch 1', embedder.embed(texts)),
        track('batch 2', embedder.embed(texts)),
        track('batch 3', embedder.embed(texts)),
        track('query', embedder.embedQuery('semantic search')),
      ]);
      expect(finished).toEqual(['batch 1', 'query', 'batch 2', 'batch 3']);
    } finally {
      await embedder.dispose();
    }
  });

  it('scores pairs on a worker exactly as on this thread', async () => {
    const documents = ['a vector index for notes', 'a recipe for bread', '语义搜索'];
    const onWorker = new built.OnnxReranker({ model: 'test/reranker' }, modelsDir);
    const here = new OnnxReranker({ model: 'test/reranker' }, modelsDir);
    try {
      const [fromWorker, fromHere] = [await onWorker.rerank('semantic search', documents), await here.rerank('semantic search', documents)];
      expect(fromWorker.map((score) => score.toFixed(5))).toEqual(fromHere.map((score) => score.toFixed(5)));
    } finally {
      await Promise.all([onWorker.dispose(), here.dispose()]);
    }
  });

  it('gives up on a call whose signal aborts, and keeps the model for the next call', async () => {
    const embedder = new built.OnnxEmbedder({ model: 'test/embedder' }, modelsDir);
    try {
      const controller = new AbortController();
      const call = embedder.embed(texts, controller.signal);
      controller.abort(new Error('cancelled by the test'));
      await expect(call).rejects.toThrow('cancelled by the test');
      expect(await embedder.embed(['hello world'])).toHaveLength(1);
    } finally {
      await embedder.dispose();
    }
  });

  it('says a model is missing without starting a thread', async () => {
    const before = await threads();
    const embedder = new built.OnnxEmbedder({ model: 'nobody/absent' }, modelsDir);
    await expect(embedder.embed(['text'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('quire models pull nobody/absent') });
    expect(await threads()).toBe(before);
    await embedder.dispose();
  });
});
