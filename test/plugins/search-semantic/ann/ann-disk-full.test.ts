import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAnnIndex } from '../../../../plugins/search-semantic/ann/ann-index.js';
import { canMount, fillDisk, freeDisk, mountRefusal, mountTmpfs, unmount } from '../../../helpers/tmpfs.js';

const D = 64;
const vector = (seed: number): Float32Array => Float32Array.from({ length: D }, (_, j) => Math.sin(seed * 0.71 + j));
let mounted: string | undefined;

afterEach(() => {
  if (mounted) {
    unmount(mounted);
    rmSync(mounted, { recursive: true, force: true });
    mounted = undefined;
  }
});

describe.skipIf(!canMount)(`an ANN index saved on a full disk${mountRefusal ? ` (skipped: ${mountRefusal})` : ''}`, () => {
  it('fails the save, leaves no partial file, and reopens as the previous save', async () => {
    mounted = mkdtempSync(join(tmpdir(), 'quire-ann-full-'));
    mountTmpfs(mounted, 4 * 1024 * 1024);
    const index = await openAnnIndex(mounted, 'blocks', { dimensions: D }, 'main');
    await index.upsert([1, 2, 3], [vector(1), vector(2), vector(3)]);
    await index.save(3);
    const keys = Array.from({ length: 3000 }, (_, i) => 10 + i);
    await index.upsert(keys, keys.map(vector));
    const filler = fillDisk(mounted);
    await expect(index.save(9)).rejects.toThrow();
    expect(readdirSync(mounted).filter((name) => name.endsWith('.usearch'))).toHaveLength(1);
    freeDisk(filler);
    await index.close();
    const again = await openAnnIndex(mounted, 'blocks', { dimensions: D }, 'main');
    expect(again.needsRebuild).toBeUndefined();
    expect(again.savedWatermark).toBe(3);
    expect(again.size()).toBe(3);
    await again.close();
  });
});
