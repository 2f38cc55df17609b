// In the built kernel the model's worker thread is started by a backend call, which runs in the egress
// scope of the backend's manifest entry (effects []): the kernel's worker guard then starts it through
// its guarded entry, so the thread that runs the model cannot reach the network either.
import workerThreads from 'node:worker_threads';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import type { Kernel } from '../../../core/kernel.js';
import { silentLogger } from '../../../core/log.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { REPO_ROOT } from '../../helpers/harness.js';

const started: string[] = [];
// Installed before the kernel's guard, which extends the Worker it finds: this class sees what the guard starts.
const Original = workerThreads.Worker;
Object.defineProperty(workerThreads, 'Worker', {
  value: class extends Original {
    constructor(filename: string | URL, options: workerThreads.WorkerOptions = {}) {
      started.push(options.eval === true && String(filename).includes('startGuardedWorker') ? 'guarded entry' : String(filename));
      super(filename, options);
    }
  },
  writable: true, configurable: true,
});

let root: string | undefined;
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it('starts the model\'s worker through the egress guard\'s entry, with the backend\'s effects', async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-local-models-guard-'));
  await generateTinyBertModel(join(root, 'workspace', 'models', 'test', 'embedder'), { cjk: false });
  await mkdir(join(root, 'manifests'));
  await copyFile(join(REPO_ROOT, 'manifests', 'local-models.json'), join(root, 'manifests', 'local-models.json'));
  const { Kernel: BuiltKernel } = await import(pathToFileURL(join(REPO_ROOT, 'dist', 'core', 'kernel.js')).href) as { Kernel: typeof Kernel };
  const kernel = await BuiltKernel.boot({
    workspace: join(root, 'workspace'), logger: silentLogger, nativeManifestsDir: join(root, 'manifests'), codeRoot: join(REPO_ROOT, 'dist'),
    config: { plugins: { 'local-models': { config: { embedder: { model: 'test/embedder' } } } } },
  });
  try {
    const embedder = kernel.backends.select('embedder', 'local-models', 'test.embedder', 'test').current()!.backend;
    expect((await embedder.embed(['hello'])).map((vector) => vector.length)).toEqual([32]);
    expect(started).toEqual(['guarded entry']);
  } finally {
    await kernel.close();
  }
});
