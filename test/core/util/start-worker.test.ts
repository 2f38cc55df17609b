import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startWorker, workerExecArgv } from '../../../core/util/worker-exec-argv.js';
import { useHarness } from '../../helpers/harness.js';

describe('workers of the kernel', () => {
  const { tempDir } = useHarness();

  it('drop the flags that would preload code, and keep the others', () => {
    expect(workerExecArgv(['--enable-source-maps', '--import', 'hook.js', '--require=x.cjs', '-r', 'y.cjs', '--input-type=module', '--trace-warnings']))
      .toEqual(['--enable-source-maps', '--trace-warnings']);
  });

  it('start under flags a worker refuses (V8 memory limits, the process title), without them', async () => {
    const script = join(await tempDir(), 'answer.mjs');
    await writeFile(script, "import { parentPort } from 'node:worker_threads'; parentPort.postMessage('started');\n");
    // `node --max-old-space-size=… quire serve` made new Worker throw ERR_WORKER_INVALID_EXEC_ARGV.
    const worker = startWorker(pathToFileURL(script), {}, ['--max-old-space-size=256', '--title=quire', '--enable-source-maps']);
    try {
      expect(await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); })).toBe('started');
    } finally {
      await worker.terminate();
    }
  });
});
