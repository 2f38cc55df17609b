// Not a test: writes the 384-d model that bench/local-models-event-loop.ts measures (the generator lives
// under test/, which the build leaves out). Runs only when QUIRE_BENCH_MODELS names the models folder.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';

const target = process.env.QUIRE_BENCH_MODELS;

it.runIf(target)('writes bench/embedder-384 and bench/reranker-384 (384-d, one layer, 128 tokens) under QUIRE_BENCH_MODELS', async () => {
  const embedder = await generateTinyBertModel(join(target!, 'bench', 'embedder-384'), { dimensions: 384, seed: 15 });
  const reranker = await generateTinyBertModel(join(target!, 'bench', 'reranker-384'), { kind: 'cross-encoder', dimensions: 384, seed: 16 });
  expect([embedder.dimensions, reranker.dimensions]).toEqual([384, 384]);
}, 120_000);
