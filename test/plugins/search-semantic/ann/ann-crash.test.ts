import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openAnnIndex } from '../../../../plugins/search-semantic/ann/ann-index.js';
import { REPO_ROOT } from '../../../helpers/harness.js';

const D = 32;
const BATCH = 200;
const moduleUrl = pathToFileURL(join(REPO_ROOT, 'dist', 'plugins', 'search-semantic', 'ann', 'ann-index.js')).href;

/**
 * A process that adds BATCH vectors, saves with the number of batches as the watermark, says so, and
 * goes on until it is killed: so the size a saved index must have is watermark × BATCH.
 */
const saver = `
const { openAnnIndex } = await import(process.argv[1]);
const index = await openAnnIndex(process.argv[2], 'blocks', { dimensions: ${D} });
for (let round = index.savedWatermark + 1; ; round++) {
  const keys = Array.from({ length: ${BATCH} }, (_, i) => (round - 1) * ${BATCH} + i);
  await index.upsert(keys, keys.map((key) => Float32Array.from({ length: ${D} }, (_, j) => Math.sin(key * 0.37 + j))));
  await index.save(round);
  process.stdout.write('saved ' + round + '\\n');
}`;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an ANN index killed while it saves', () => {
  it('opens as the last save or the one before, never torn, at every kill point', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quire-ann-crash-'));
    let previous = 0;
    for (const delayMs of [0, 1, 2, 4, 7, 12]) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', saver, moduleUrl, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      let saved = 0;
      let out = '';
      // 'close', not 'exit': the last 'saved' line may still be in the pipe when the process has exited.
      const exited = new Promise((resolve) => child.on('close', resolve));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          saved = Number(/saved (\d+)\n$/.exec(out)?.[1] ?? saved);
          // Two saves past the file this process started from, then a kill somewhere in the next round.
          if (saved >= previous + 2) resolve();
        });
        child.on('exit', (code) => reject(new Error(`the saving process ended by itself (${code})`)));
      });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill('SIGKILL');
      await exited;
      saved = Number([...out.matchAll(/saved (\d+)\n/g)].at(-1)?.[1] ?? saved);
      const index = await openAnnIndex(dir, 'blocks', { dimensions: D }, 'main');
      expect(index.needsRebuild).toBeUndefined();
      expect([saved, saved + 1]).toContain(index.savedWatermark);
      expect(index.size()).toBe(index.savedWatermark * BATCH);
      previous = index.savedWatermark;
      await index.close();
    }
  }, 120_000);
});
