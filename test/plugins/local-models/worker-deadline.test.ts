import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WorkerRunner } from '../../../plugins/local-models/worker-runner.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-worker-deadline-'));
  await generateTinyBertModel(join(root, 'models', 'test', 'embedder'), { cjk: false });
  // A worker whose run never ends (a wedged model): it takes requests and answers none.
  await writeFile(join(root, 'wedged.mjs'), "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => {});\n");
});
afterAll(async () => { await rm(root, { recursive: true, force: true }); });

it('ends a worker whose run passes its deadline, says so, and serves the requests that waited on a new one', async () => {
  const runner = new WorkerRunner({ kind: 'embedder', modelsDir: join(root, 'models'), model: 'test/embedder' }, pathToFileURL(join(root, 'wedged.mjs')), 200);
  try {
    const options = { pooling: 'mean' as const, normalize: true };
    // The second waits behind the first: before, it waited for ever.
    const outcomes = await Promise.allSettled([runner.embed(['one'], options), runner.embed(['two'], options)]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('did not answer within') });
    }
  } finally {
    await runner.dispose();
  }
}, 20_000);
