// A kernel with the real local-models plugin (its manifest alone: the test does not depend on the others) and a generated model in <workspace>/models: local-models offers
// the onnx embedder and reranker that quire.json configures, with no effects, and they work through the
// kernel's backend registry (every call in an egress scope without dataEgress).
import { createHash } from 'node:crypto';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { Kernel } from '../../../core/kernel.js';
import { createHttpApp } from '../../../core/http/app.js';
import { silentLogger } from '../../../core/log.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_local-models-admin';
const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: createHash('sha256').update(ADMIN).digest('hex') }] };

interface Listing {
  plugins: { id: string; active: boolean; embedders?: { name: string; effects: string[] }[]; rerankers?: { name: string; effects: string[] }[] }[];
  backends: { kind: string; plugin: string; name: string; effects: string[] }[];
}

describe('the local-models plugin in a kernel', () => {
  const harness = useHarness();

  async function workspaceWithModels(): Promise<string> {
    const workspace = join(await harness.tempDir(), 'workspace');
    await generateTinyBertModel(join(workspace, 'models', 'test', 'embedder'), { seed: 11 });
    await generateTinyBertModel(join(workspace, 'models', 'test', 'reranker'), { kind: 'cross-encoder', seed: 12, cjk: false });
    return workspace;
  }

  const kernels: Kernel[] = [];
  afterEach(async () => {
    for (const kernel of kernels.splice(0)) await kernel.close();
  });

  /** `codeRoot`: the sources (models on this thread) or dist (the built kernel: models on a worker). */
  async function boot(config: KernelConfigFile, workspace?: string, BootKernel: typeof Kernel = Kernel, codeRoot = REPO_ROOT): Promise<Kernel> {
    const manifests = await harness.tempDir('quire-manifests-');
    await copyFile(join(REPO_ROOT, 'manifests', 'local-models.json'), join(manifests, 'local-models.json'));
    const kernel = await BootKernel.boot({ workspace: workspace ?? join(await harness.tempDir(), 'workspace'), config: { auth, ...config }, nativeManifestsDir: manifests, codeRoot, logger: silentLogger });
    kernels.push(kernel);
    return kernel;
  }

  async function listing(kernel: Kernel): Promise<Listing> {
    const response = await createHttpApp(kernel).request('/api/plugins', { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(response.status).toBe(200);
    return await response.json() as Listing;
  }

  it('offers the configured embedder and reranker with no effects, listed in GET /api/plugins, and they run', async () => {
    const workspace = await workspaceWithModels();
    const kernel = await boot({ plugins: { 'local-models': { config: { embedder: { model: 'test/embedder', queryPrefix: 'query: ' }, reranker: { model: 'test/reranker' } } } } }, workspace);
    const { plugins, backends } = await listing(kernel);
    const plugin = plugins.find((candidate) => candidate.id === 'local-models')!;
    expect(plugin).toMatchObject({ active: true, embedders: [{ name: 'onnx', effects: [] }], rerankers: [{ name: 'onnx', effects: [] }] });
    expect(backends.filter((backend) => backend.plugin === 'local-models')).toEqual([
      expect.objectContaining({ kind: 'embedder', name: 'onnx', effects: [] }),
      expect.objectContaining({ kind: 'reranker', name: 'onnx', effects: [] }),
    ]);

    const embedder = kernel.backends.select('embedder', 'local-models', 'test.embedder', 'test').current()!.backend;
    expect([embedder.model, embedder.dimensions]).toEqual(['test/embedder', 32]);
    const vectors = await embedder.embed(['hello world', '你好']);
    expect(vectors.map((vector) => vector.length)).toEqual([32, 32]);
    expect((await embedder.embedQuery!('hello')).length).toBe(32);
    const reranker = kernel.backends.select('reranker', 'local-models/onnx', 'test.reranker', 'test').current()!.backend;
    expect((await reranker.rerank('hello', ['a', 'b', 'c'])).every(Number.isFinite)).toBe(true);
  });

  it('offers nothing when quire.json configures nothing, and starts even when the configured model is not downloaded', async () => {
    const bare = await boot({});
    const listed = await listing(bare);
    expect(listed.plugins.find((plugin) => plugin.id === 'local-models')).toMatchObject({ active: true });
    expect(listed.backends.filter((backend) => backend.plugin === 'local-models')).toEqual([]);

    const missing = await boot({ plugins: { 'local-models': { config: { embedder: { model: 'nobody/not-pulled' } } } } });
    const embedder = missing.backends.select('embedder', 'local-models', 'test.embedder', 'test').current()!.backend;
    expect(embedder.dimensions).toBe(0);
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('quire models pull nobody/not-pulled') });
  });

  it('refuses a model id that is a path, when the config is read', async () => {
    const error = await boot({ plugins: { 'local-models': { config: { embedder: { model: '../../etc' } } } } }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: expect.stringMatching(/CONFIG_INVALID|PLUGIN_CONFIG_INVALID/) });
  });

  it('runs the model on a worker thread under the egress guard in the built kernel', async () => {
    const workspace = await workspaceWithModels();
    const { Kernel: BuiltKernel } = await import(pathToFileURL(join(REPO_ROOT, 'dist', 'core', 'kernel.js')).href) as { Kernel: typeof import('../../../core/kernel.js').Kernel };
    const kernel = await boot({ plugins: { 'local-models': { config: { embedder: { model: 'test/embedder' }, reranker: { model: 'test/reranker' } } } } }, workspace, BuiltKernel, join(REPO_ROOT, 'dist'));
    {
      const embedder = kernel.backends.select('embedder', 'local-models', 'test.embedder', 'test').current()!.backend;
      const vectors = await embedder.embed(['hello world', '向量']);
      expect(vectors.map((vector) => vector.length)).toEqual([32, 32]);
      const reranker = kernel.backends.select('reranker', 'local-models', 'test.reranker', 'test').current()!.backend;
      expect(await reranker.rerank('hello', ['a', 'b'])).toHaveLength(2);
    }
  });
});
