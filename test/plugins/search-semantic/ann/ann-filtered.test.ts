import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exactTopK, openAnnIndex, type AnnHit, type AnnIndex } from '../../../../plugins/search-semantic/ann/ann-index.js';
import { EmbeddingSpace } from '../../../../bench/semantic-vectors.js';

const N = 20_000;
const D = 64;
const K = 10;
const QUERIES = 40;
let dir: string;
let index: AnnIndex;
const vectors = new Float32Array(N * D);
const queries = new Float32Array(QUERIES * D);
const space = new EmbeddingSpace(D, 15);
space.fill(vectors, N, 16);
space.fill(queries, QUERIES, 17);
const row = (array: Float32Array, i: number): Float32Array => array.subarray(i * D, (i + 1) * D);

/** A pseudo-random tenth-of-a-percent-grained share of the keys. */
function keysAllowed(share: number): (key: number) => boolean {
  const cut = Math.round(share * 1000);
  return (key) => (Math.imul(key + 1, 2654435761) >>> 0) % 1000 < cut;
}

function exactAmong(allowed: (key: number) => boolean, query: Float32Array): AnnHit[] {
  const keys: number[] = [];
  for (let key = 0; key < N; key++) if (allowed(key)) keys.push(key);
  const rows = new Float32Array(keys.length * D);
  keys.forEach((key, i) => rows.set(row(vectors, key), i * D));
  return exactTopK(query, keys, rows, D, K);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quire-ann-filter-'));
  index = await openAnnIndex(dir, 'blocks', { dimensions: D }, 'main');
  for (let start = 0; start < N; start += 2000) {
    const keys = Array.from({ length: 2000 }, (_, i) => start + i);
    await index.upsert(keys, keys.map((key) => row(vectors, key)));
  }
}, 120_000);

afterAll(async () => {
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('filtered ANN search', () => {
  it.each([0.1, 0.12, 0.3])('returns only allowed keys with recall@10 ≥ 0.95 against exact when %s of keys are allowed', async (share) => {
    const allowed = keysAllowed(share);
    let found = 0;
    let expected = 0;
    for (let q = 0; q < QUERIES; q++) {
      const query = row(queries, q);
      const truth = exactAmong(allowed, query);
      const hits = await index.searchAllowed(query, K, allowed, share);
      expect(hits, 'the over-fetch at this share stays under its cap').not.toBeNull();
      for (const hit of hits!) expect(allowed(hit.key), `key ${hit.key} is outside the filter`).toBe(true);
      expect(new Set(hits!.map((hit) => hit.key)).size).toBe(hits!.length);
      const truthKeys = new Set(truth.map((hit) => hit.key));
      found += hits!.filter((hit) => truthKeys.has(hit.key)).length;
      expected += truth.length;
    }
    expect(found / expected).toBeGreaterThanOrEqual(0.95);
  });

  it('checks the candidates all at once (`among`, as a check in SQL does) with the same answers as one key at a time', async () => {
    const allowed = keysAllowed(0.12);
    let asked = 0;
    for (let q = 0; q < 5; q++) {
      const query = row(queries, q);
      const among = (keys: readonly number[]): ReadonlySet<number> => {
        asked++;
        return new Set(keys.filter(allowed));
      };
      expect(await index.searchAllowed(query, K, { among }, 0.12)).toEqual(await index.searchAllowed(query, K, allowed, 0.12));
    }
    // One check per search, over the graph's results.
    expect(asked).toBe(5);
  });

  it('gives null, never a disallowed key, when no key is allowed', async () => {
    const query = row(queries, 0);
    expect(await index.searchAllowed(query, K, () => false, 0.3)).toBeNull();
    expect(await index.searchAllowed(query, K, () => false, 0)).toBeNull();
  });

  it('gives null when asking the graph for enough results would cost more than the exact search among the allowed keys', async () => {
    // 20,000 keys: at 5%, 800 results would be asked for 1,000 allowed keys (the graph pays off from 0.75 a key).
    for (const share of [0.05, 0.01, 0.001]) {
      expect(await index.searchAllowed(row(queries, 1), K, keysAllowed(share), share)).toBeNull();
    }
    const allowed = keysAllowed(0.005);
    const exact = exactAmong(allowed, row(queries, 1));
    expect(exact).toHaveLength(K);
    expect(exact.every((hit) => allowed(hit.key))).toBe(true);
  });

  it('gives k allowed keys or null (exact instead) when the share was overestimated, never a key outside the filter', async () => {
    const allowed = keysAllowed(0.02);
    const hits = await index.searchAllowed(row(queries, 2), K, allowed, 0.5);
    expect(hits === null || hits.every((hit) => allowed(hit.key))).toBe(true);
    expect(hits?.length ?? K).toBe(K);
  });

  it('gives all allowed keys when fewer than k exist and the graph was searched whole', async () => {
    const small = await openAnnIndex(join(dir, 'small'), 'blocks', { dimensions: D }, 'main');
    await small.upsert([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6].map((i) => row(vectors, i)));
    const hits = await small.searchAllowed(row(queries, 0), K, (key) => key % 2 === 0, 0.5);
    expect(hits?.map((hit) => hit.key).sort()).toEqual([2, 4, 6]);
    await small.close();
  });
});
