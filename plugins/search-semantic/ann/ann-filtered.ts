import type { AnnHit } from './ann-index.js';
import type { RawMatches } from './ann-engine.js';

/**
 * Over-fetch of a filtered search: the graph is asked once for k / share × MARGIN results (at least
 * MIN_FETCH, the unfiltered search's ef; usearch searches with ef = max(its ef, results asked), so this
 * is also the search's ef).
 * The answer is null, and the caller searches exactly among the allowed keys, when fewer than k allowed
 * keys come back, or when asking that many would cost more than the exact search: that reads each
 * allowed vector from SQLite (about 5.3 µs a vector: 53 ms for 10,000), the graph about 6.8 µs a result
 * asked (21 ms for 3,072), hence GRAPH_RESULTS_PER_EXACT_VECTOR; MAX_NEEDED bounds one query's work.
 * Measured at 1M × 384-d (M 16, f16, ef 256; queries drawn as the notes are), recall@10 against the
 * exact answer among the allowed keys, by results asked:
 *   1% allowed: 1,600 → 0.954 (13 ms), 3,072 → 0.989 (21 ms);  2%: 800 → 0.978, 1,600 → 0.993 (11 ms);
 *   5%: 400 → 0.992 (1.8 ms), 800 → 0.997;  10%: 200 → 0.997 (1.7 ms);  30%: 200 → 1.0 (1.3 ms).
 * Recall follows from enough allowed keys coming back: a margin of 2 was enough from 2% up; 4 leaves
 * room for queries less like the notes (mostly off their topics, QUERY_OFF_TOPIC=3, recall was 0.91–0.97
 * at 1–30% allowed: such queries are better served by a larger margin). For k = 10 at 1M the graph answers from about 1% allowed; for a
 * page of 20, from 2%. (The earlier limits, the graph only from 10% with at least 3,072 asked, were
 * measured with queries unlike the notes: see bench/semantic-vectors.ts.)
 */
export const FILTER_MARGIN = 4;
export const MIN_FETCH = 512;
export const GRAPH_RESULTS_PER_EXACT_VECTOR = 0.75;
export const MAX_NEEDED = 16_384;

export type RawSearch = (query: Float32Array, k: number) => Promise<RawMatches>;

/**
 * Which keys pass the filter: asked one key at a time, or for all the graph's results at once (`among`,
 * the keys allowed among them: a check made in SQL over the candidates rather than a set of every
 * allowed key made first).
 */
export type AllowedKeys = ((key: number) => boolean) | { among(keys: readonly number[]): ReadonlySet<number> };

export async function searchAllowedKeys(
  search: RawSearch, size: number, query: Float32Array, k: number, allowedKeys: AllowedKeys, selectivity: number,
): Promise<AnnHit[] | null> {
  const wanted = Math.floor(k);
  if (wanted <= 0) return [];
  if (!(selectivity > 0)) return null;
  // An index of at most MIN_FETCH keys is searched whole, which costs next to nothing either way.
  const small = size <= MIN_FETCH;
  const needed = small ? size : Math.max(MIN_FETCH, Math.ceil((wanted / Math.min(selectivity, 1)) * FILTER_MARGIN));
  if (!small && (needed > MAX_NEEDED || needed > selectivity * size * GRAPH_RESULTS_PER_EXACT_VECTOR)) return null;
  const matches = await search(query, needed);
  let allowed: (key: number) => boolean;
  if (typeof allowedKeys === 'function') allowed = allowedKeys;
  else {
    const among = allowedKeys.among(Array.from(matches.keys));
    allowed = (key) => among.has(key);
  }
  const hits = keepAllowed(matches, allowed, wanted);
  // Every key of the index came back: what survived the filter is the whole (exact) answer.
  return hits.length >= wanted || matches.keys.length >= size ? hits : null;
}

function keepAllowed(matches: RawMatches, allowed: (key: number) => boolean, wanted: number): AnnHit[] {
  const hits: AnnHit[] = [];
  for (let i = 0; i < matches.keys.length && hits.length < wanted; i++) {
    const key = matches.keys[i]!;
    if (allowed(key)) hits.push({ key, score: 1 - matches.distances[i]! });
  }
  return hits;
}
