import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installEgressGuard } from '../../../../core/egress/egress-guard.js';
import { runInActivation } from '../../../../core/egress/action-scope.js';
import { openAnnIndex } from '../../../../plugins/search-semantic/ann/ann-index.js';

const dir = mkdtempSync(join(tmpdir(), 'quire-ann-guarded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ANN index on a worker the egress guard started', () => {
  // As in the kernel: the plugin opens its index while activating, so its worker thread starts through
  // the guard's entry (an eval script); usearch's ES module build never finished loading there.
  it('loads usearch, adds and finds vectors, and is refused nothing', async () => {
    installEgressGuard();
    const refused: string[] = [];
    const index = await runInActivation({ plugin: 'search-semantic', onRefused: (_kind, target) => refused.push(target) },
      () => openAnnIndex(dir, 'blocks', { dimensions: 8 }, 'worker'));
    try {
      await index.upsert([1, 2], [Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]), Float32Array.from([0, 1, 0, 0, 0, 0, 0, 0])]);
      const [best] = await index.search(Float32Array.from([0.1, 1, 0, 0, 0, 0, 0, 0]), 1);
      expect(best?.key).toBe(2);
      await index.save(1);
    } finally {
      await index.close();
    }
    expect(refused).toEqual([]);
  }, 20_000);
});
