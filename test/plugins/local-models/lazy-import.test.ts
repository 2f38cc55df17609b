// A kernel that does not use a local model never loads @huggingface/transformers (half a second of
// module loading and onnxruntime's native library): the built plugin and its backends, constructed as
// activation does, leave it unloaded in a fresh process. The control loads it, so the check can see it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { REPO_ROOT } from '../../helpers/harness.js';

const DIST = pathToFileURL(join(REPO_ROOT, 'dist', 'plugins', 'local-models')).href;
const TRANSFORMERS = pathToFileURL(join(REPO_ROOT, 'node_modules', '@huggingface', 'transformers', 'dist', 'transformers.node.mjs')).href;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-local-models-lazy-'));
  await generateTinyBertModel(join(root, 'models', 'test', 'embedder'), { cjk: false });
  await writeFile(join(root, 'probe.mjs'), `
import { createRequire } from 'node:module';
const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((key) => /onnxruntime|@huggingface/.test(key)).length;
const plugin = (await import('${DIST}/index.js')).default;
const { OnnxEmbedder } = await import('${DIST}/onnx-embedder.js');
const { OnnxReranker } = await import('${DIST}/onnx-reranker.js');
const embedder = new OnnxEmbedder({ model: 'test/embedder' }, ${JSON.stringify(join(root, 'models'))});
new OnnxReranker({ model: 'test/reranker' }, ${JSON.stringify(join(root, 'models'))});
const before = loaded();
if (process.argv[2] === 'control') await import('${TRANSFORMERS}');
console.log(JSON.stringify({ plugin: typeof plugin.activate, dimensions: embedder.dimensions, before, after: loaded() }));
`);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const probe = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [join(root, 'probe.mjs'), ...args], { encoding: 'utf8' })) as { plugin: string; dimensions: number; before: number; after: number };

describe('loading @huggingface/transformers', () => {
  it('waits for the first call: the plugin and its backends load without it, and still know the dimensions', () => {
    expect(probe()).toEqual({ plugin: 'function', dimensions: 32, before: 0, after: 0 });
  });

  it('is seen by the check once it happens (control)', () => {
    expect(probe('control').after).toBeGreaterThan(0);
  });
});
