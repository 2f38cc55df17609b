import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../core/util/worker-pool.js';
import { useHarness } from '../../helpers/harness.js';

/** A worker of another build: it answers, but never with its job's id (nor with anything the pool knows). */
const WRONG_ANSWERS = `
import { parentPort } from 'node:worker_threads';
parentPort.on('message', (request) => parentPort.postMessage(request.markdown === 'nothing' ? 'a bare string' : { id: request.id + 1000, text: { ok: true, drafts: [] } }));
`;

const threads = async (): Promise<number> => (await readdir('/proc/self/task')).length;

describe('Markdown workers answering something other than their job', () => {
  const { tempDir } = useHarness();
  it('fail the job and end the worker instead of waiting for ever (which held `quire import` open)', async () => {
    const folder = await tempDir('quire-pool-');
    const script = join(folder, 'wrong-worker.mjs');
    await writeFile(script, WRONG_ANSWERS);
    const pool = new WorkerPool<{ markdown: string }, { id: number }>(pathToFileURL(script), 2, { name: 'the Markdown worker' });
    const base = await threads();
    try {
      for (const markdown of ['x', 'nothing']) {
        const answer = await pool.run({ markdown }).then(() => 'answered', (error: unknown) => error);
        expect(answer).toBeInstanceOf(Error);
        expect((answer as Error).message).toMatch(/something else than its job/);
      }
      // Both workers were ended: nothing is left to hold the process open.
      for (let tries = 0; (await threads()) > base && tries < 200; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await threads()).toBeLessThanOrEqual(base);
    } finally {
      await pool.close();
    }
  });
});
