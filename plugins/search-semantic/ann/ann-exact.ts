import { exactSearch, MetricKind, type Matches } from './usearch-module.js';
import type { AnnHit } from './ann-index.js';

/** Below this many candidates one thread answers sooner than two (starting a thread costs more). */
const SINGLE_THREAD_ROWS = 20_000;

/**
 * Exact cosine top-k among candidates: row i of `vectors` (flat, `dimensions` wide) is the vector of
 * `candidateKeys[i]`. Runs on the calling thread (usearch's SIMD kernel, about 10× a JavaScript loop);
 * cost grows with the number of candidates, so it is for filtered searches with a small allowed set.
 */
export function exactTopK(
  query: Float32Array, candidateKeys: readonly number[], vectors: Float32Array, dimensions: number, k: number,
): AnnHit[] {
  if (query.length !== dimensions) throw new Error(`exactTopK: the query has ${query.length} dimensions, not ${dimensions}`);
  if (vectors.length !== candidateKeys.length * dimensions) {
    throw new Error(`exactTopK: ${candidateKeys.length} candidates need ${candidateKeys.length * dimensions} numbers, got ${vectors.length}`);
  }
  const wanted = Math.min(Math.floor(k), candidateKeys.length);
  if (wanted <= 0) return [];
  // usearch's exactSearch reads from the start of the underlying buffer (it ignores byteOffset) and
  // refuses SharedArrayBuffer memory: anything but a whole, private buffer is copied first.
  const found = exactSearch(
    ownBuffer(vectors), ownBuffer(query), dimensions, wanted, MetricKind.Cos,
    candidateKeys.length < SINGLE_THREAD_ROWS ? 1 : 0,
  ) as Matches; // one query: a Matches, not a BatchMatches
  const hits: AnnHit[] = [];
  for (let i = 0; i < found.keys.length; i++) {
    // Its keys are row positions in `vectors`.
    const key = candidateKeys[Number(found.keys[i])];
    if (key !== undefined) hits.push({ key, score: 1 - found.distances[i]! });
  }
  return hits;
}

function ownBuffer(array: Float32Array): Float32Array {
  const whole = array.byteOffset === 0 && array.byteLength === array.buffer.byteLength && array.buffer instanceof ArrayBuffer;
  return whole ? array : array.slice();
}
