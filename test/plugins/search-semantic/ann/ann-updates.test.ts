import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exactTopK, openAnnIndex, type AnnIndex, type AnnThread } from '../../../../plugins/search-semantic/ann/ann-index.js';

const D = 16;
let dir: string;
const opened: AnnIndex[] = [];

function vector(seed: number): Float32Array {
  return Float32Array.from({ length: D }, (_, j) => Math.sin(seed * 12.9898 + j * 78.233) + 0.1 * Math.cos(seed * j));
}

async function open(thread: AnnThread = 'main'): Promise<AnnIndex> {
  const index = await openAnnIndex(dir, 'blocks', { dimensions: D }, thread);
  opened.push(index);
  return index;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'quire-ann-'));
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((index) => index.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['main', 'worker'] as const)('ANN index updates (%s thread)', (thread) => {
  it('replaces the vector of a key given again, in another batch or the same one', async () => {
    const index = await open(thread);
    await index.upsert([1, 2, 3], [vector(1), vector(2), vector(3)]);
    await index.upsert([2, 4], [vector(200), vector(4)]);
    expect(index.size()).toBe(4);
    const [best] = await index.search(vector(200), 1);
    expect(best).toMatchObject({ key: 2 });
    expect(best!.score).toBeCloseTo(1, 3);
    expect((await index.search(vector(2), 4)).find((hit) => hit.key === 2)!.score).toBeLessThan(0.99);
    await index.upsert([5, 5], [vector(5), vector(500)]);
    expect(index.size()).toBe(5);
    expect((await index.search(vector(500), 1))[0]).toMatchObject({ key: 5 });
  });

  it('removes keys, ignores absent ones, and reuses the room of removed vectors', async () => {
    const index = await open(thread);
    await index.upsert([1, 2, 3], [vector(1), vector(2), vector(3)]);
    await index.remove([2, 77]);
    expect(index.size()).toBe(2);
    expect(await index.has(2)).toBe(false);
    expect((await index.search(vector(2), 3)).map((hit) => hit.key).sort()).toEqual([1, 3]);
    for (let round = 0; round < 50; round++) await index.upsert([1, 3], [vector(round), vector(round + 100)]);
    expect(index.size()).toBe(2);
  });

  it('refuses vectors or queries of the wrong width, and keys that are not safe integers, changing nothing', async () => {
    const index = await open(thread);
    await index.upsert([1], [vector(1)]);
    await expect(index.upsert([2], [new Float32Array(D + 1)])).rejects.toThrow(/dimensions/);
    await expect(index.upsert([-1], [vector(3)])).rejects.toThrow(/non-negative safe integers/);
    await expect(index.upsert([2 ** 53], [vector(3)])).rejects.toThrow(/non-negative safe integers/);
    await expect(index.search(new Float32Array(D - 1), 1)).rejects.toThrow(/dimensions/);
    expect(index.size()).toBe(1);
  });

  it('refuses calls after close', async () => {
    const index = await open(thread);
    await index.close();
    await expect(index.search(vector(1), 1)).rejects.toThrow(/closed/);
    await expect(index.upsert([1], [vector(1)])).rejects.toThrow(/closed/);
  });

  it('answers fewer than k when the index holds fewer, best first', async () => {
    const index = await open(thread);
    await index.upsert([10, 20, 30], [vector(10), vector(20), vector(30)]);
    const hits = await index.search(vector(20), 10);
    expect(hits.map((hit) => hit.key)).toHaveLength(3);
    expect(hits[0]!.key).toBe(20);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
  });
});

describe('exact top-k', () => {
  it('ranks candidates given as a view into a larger array (usearch would read from its start)', () => {
    const all = new Float32Array(10 * D);
    for (let i = 0; i < 10; i++) all.set(vector(i), i * D);
    const view = all.subarray(5 * D); // rows 5..9
    const hits = exactTopK(vector(7), [105, 106, 107, 108, 109], view, D, 2);
    expect(hits[0]).toMatchObject({ key: 107 });
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits).toHaveLength(2);
    expect(exactTopK(vector(7), [1, 2], all.subarray(0, 2 * D), D, 10)).toHaveLength(2);
    expect(exactTopK(vector(7), [], new Float32Array(0), D, 10)).toEqual([]);
  });

  it('accepts a query that lives in shared memory', () => {
    const shared = new Float32Array(new SharedArrayBuffer(D * 4));
    shared.set(vector(3));
    const rows = new Float32Array(2 * D);
    rows.set(vector(3), 0);
    rows.set(vector(4), D);
    expect(exactTopK(shared, [30, 40], rows, D, 1)[0]).toMatchObject({ key: 30 });
  });
});

describe('ANN index on its worker thread', () => {
  it('answers a query before the writes still waiting, and saves every write called before the save', async () => {
    const index = await open('worker');
    const order: string[] = [];
    const batch = (base: number) => Array.from({ length: 300 }, (_, i) => base + i);
    const writes = [0, 1000, 2000, 3000].map((base, i) =>
      index.upsert(batch(base), batch(base).map(vector)).then(() => order.push(`write ${i}`)));
    const query = index.search(vector(5), 1).then((hits) => { order.push('query'); return hits; });
    const saved = index.save(9).then(() => order.push('save'));
    await Promise.all([...writes, query, saved]);
    expect(order).toEqual(['write 0', 'query', 'write 1', 'write 2', 'write 3', 'save']);
    await index.close();
    const again = await open('worker');
    expect(again.savedWatermark).toBe(9);
    expect(again.size()).toBe(1200);
  });

});
