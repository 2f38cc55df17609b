// `quire models pull` downloads with transformers.js' own remote loading from a loopback stand-in of the
// Hub; the folder it writes loads offline afterwards. Failures leave nothing a load would take for a model.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env } from '@huggingface/transformers';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listModels, pullModel, type PullProgress } from '../../../plugins/local-models/model-pull.js';
import { OnnxEmbedder } from '../../../plugins/local-models/onnx-embedder.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { ModelHost } from './model-host.js';

let root: string;
let host: ModelHost;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-models-pull-'));
  await generateTinyBertModel(join(root, 'hub', 'test-org', 'tiny-embedder'), { seed: 5 });
  host = await ModelHost.start(join(root, 'hub'));
});

afterAll(async () => {
  await host.close();
  await rm(root, { recursive: true, force: true });
});

let modelsDir: string;
beforeEach(async () => {
  modelsDir = await mkdtemp(join(root, 'workspace-'));
  host.requests.length = 0;
  host.failFile = undefined;
});

describe('pulling a model', () => {
  it('downloads the four files into <workspace>/models/<org>/<name>/, reporting progress, and a later offline load needs no network', async () => {
    const progress: PullProgress[] = [];
    const result = await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url, onProgress: (update) => progress.push(update) });
    expect(result.downloaded).toBe(true);
    expect(result.folder).toBe(join(modelsDir, 'test-org', 'tiny-embedder'));
    expect(result.files.map((file) => file.path).sort()).toEqual(['config.json', 'onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
    expect(result.files.every((file) => file.bytes > 0)).toBe(true);
    expect(progress.some((update) => update.file === 'onnx/model.onnx' && update.done)).toBe(true);
    // Nothing else in the models folder: the staging folder is gone.
    expect(await readdir(modelsDir)).toEqual(['test-org']);
    expect(host.requests.some((request) => request.endsWith('/test-org/tiny-embedder/resolve/main/onnx/model.onnx'))).toBe(true);

    host.requests.length = 0;
    const fetched: string[] = [];
    const originalFetch = env.fetch;
    env.fetch = async (input: string | URL) => { fetched.push(String(input)); throw new Error('no network'); };
    const embedder = new OnnxEmbedder({ model: 'test-org/tiny-embedder' }, modelsDir);
    try {
      const [vector] = await embedder.embed(['向量 search']);
      expect(vector).toHaveLength(32);
      expect([fetched, host.requests]).toEqual([[], []]);
    } finally {
      await embedder.dispose();
      env.fetch = originalFetch;
    }
    expect(await listModels(modelsDir)).toEqual([{ id: 'test-org/tiny-embedder', weights: ['onnx/model.onnx'], bytes: expect.any(Number) }]);
  });

  it('does not download again a model that is there, unless forced', async () => {
    await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url });
    host.requests.length = 0;
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url })).downloaded).toBe(false);
    expect(host.requests).toEqual([]);
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url, force: true })).downloaded).toBe(true);
    expect(host.requests.length).toBeGreaterThan(0);
    expect(await readdir(join(modelsDir, 'test-org'))).toEqual(['tiny-embedder']);
  });

  it('keeps what the model\'s folder holds besides the download (weights of another dtype) when pulling it again', async () => {
    await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url });
    const folder = join(modelsDir, 'test-org', 'tiny-embedder');
    await writeFile(join(folder, 'onnx', 'model_quantized.onnx'), 'q8 weights pulled before');
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url, force: true })).downloaded).toBe(true);
    expect(await readFile(join(folder, 'onnx', 'model_quantized.onnx'), 'utf8')).toBe('q8 weights pulled before');
    expect(await readdir(join(modelsDir, 'test-org'))).toEqual(['tiny-embedder']);
  });

  it('puts back a model left under its old name by a pull killed between its two renames', async () => {
    await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url });
    await rename(join(modelsDir, 'test-org', 'tiny-embedder'), join(modelsDir, 'test-org', 'tiny-embedder.old-0f0f0f0f-1111-2222-3333-444455556666'));
    host.requests.length = 0;
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url })).downloaded).toBe(false);
    expect(host.requests).toEqual([]);
    expect(await readdir(join(modelsDir, 'test-org'))).toEqual(['tiny-embedder']);
  });

  it('does not take another model whose name only begins the same for one left by a killed pull', async () => {
    await mkdir(join(modelsDir, 'test-org', 'tiny-embedder.old-v2'), { recursive: true });
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url })).downloaded).toBe(true);
    expect((await readdir(join(modelsDir, 'test-org'))).sort()).toEqual(['tiny-embedder', 'tiny-embedder.old-v2']);
  });

  it('says a model the host does not have was not found, and leaves no folder behind', async () => {
    await expect(pullModel({ modelsDir, model: 'test-org/no-such-model', remoteHost: host.url })).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining("model 'test-org/no-such-model' was not found at") });
    expect(await readdir(modelsDir)).toEqual([]);
  });

  it('leaves no half folder when the weights are missing on the host (the small files came)', async () => {
    await generateTinyBertModel(join(root, 'hub', 'test-org', 'no-weights'), { seed: 6, cjk: false });
    await rm(join(root, 'hub', 'test-org', 'no-weights', 'onnx'), { recursive: true });
    await expect(pullModel({ modelsDir, model: 'test-org/no-weights', remoteHost: host.url })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await readdir(modelsDir)).toEqual([]);
    const embedder = new OnnxEmbedder({ model: 'test-org/no-weights' }, modelsDir);
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('quire models pull test-org/no-weights') });
  });

  it('leaves no half folder when the connection drops during the weights', async () => {
    host.failFile = 'onnx/model.onnx';
    await expect(pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect(existsSync(join(modelsDir, 'test-org'))).toBe(false);
    expect(await readdir(modelsDir)).toEqual([]);
  });

  it('says the host cannot be reached', async () => {
    const closed = await ModelHost.start(join(root, 'hub'));
    const url = closed.url;
    await closed.close();
    await expect(pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: url })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining(`could not reach ${url}`) });
    expect(await readdir(modelsDir)).toEqual([]);
  });

  it('removes the staging folder of a pull abandoned more than a day ago, and leaves a recent one (another pull may own it)', async () => {
    const old = join(modelsDir, '.pull-abandoned');
    const recent = join(modelsDir, '.pull-running');
    await mkdir(join(old, 'test-org'), { recursive: true });
    await mkdir(recent);
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    await utimes(old, twoDaysAgo, twoDaysAgo);
    await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url });
    expect((await readdir(modelsDir)).sort()).toEqual(['.pull-running', 'test-org']);
    expect(await listModels(modelsDir)).toHaveLength(1);
  });

  it('refuses an id that is not org/name before any request', async () => {
    for (const model of ['../escape', '/abs/path', 'org/..', 'single']) {
      await expect(pullModel({ modelsDir, model, remoteHost: host.url })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(host.requests).toEqual([]);
  });

  it('refuses plain http from another machine before any request (the weights are not signed), and allows it on loopback', async () => {
    for (const remoteHost of ['http://mirror.example.com/', 'ftp://mirror.example.com/', 'not a url']) {
      await expect(pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/remoteHost/) });
    }
    expect(existsSync(join(modelsDir, 'test-org', 'tiny-embedder'))).toBe(false);
    expect(host.url.startsWith('http://127.0.0.1')).toBe(true);
    expect((await pullModel({ modelsDir, model: 'test-org/tiny-embedder', remoteHost: host.url })).downloaded).toBe(true);
  });
});
