/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009): each list a block appears in adds
 * 1 / (k + rank) to its score. Only ranks count, so bm25 scores and cosine similarities, which have
 * nothing in common, need no calibration. k = 60 is the paper's constant, also the default of
 * Elasticsearch, OpenSearch and Azure AI Search: it flattens the head of each list, so a block ranked
 * well by both arms outranks one ranked first by a single arm (1/61 + 1/62 > 1/61), while rank still
 * matters further down (1/61 against 1/160 at rank 100).
 */
export const RRF_K = 60;

export interface Ranked {
  id: string;
  /** 1-based rank within its own list. */
  rank: number;
  /** The arm's own score (bm25, cosine), reported, never fused. */
  score: number;
}

export interface Fused<A extends string> {
  id: string;
  score: number;
  arms: Partial<Record<A, { rank: number; score: number }>>;
}

/**
 * Fuses ranked lists, best first. Equal fused scores: the better best rank first, then the order of
 * `lists` (the first arm wins), then the id, so the answer is the same every time.
 */
export function reciprocalRankFusion<A extends string>(lists: Readonly<Partial<Record<A, readonly Ranked[]>>>, k = RRF_K): Fused<A>[] {
  const fused = new Map<string, Fused<A> & { best: number; firstArm: number }>();
  (Object.entries(lists) as [A, readonly Ranked[] | undefined][]).forEach(([arm, list], armIndex) => {
    for (const entry of list ?? []) {
      let item = fused.get(entry.id);
      if (!item) fused.set(entry.id, item = { id: entry.id, score: 0, arms: {}, best: Infinity, firstArm: armIndex });
      // A list naming a block twice counts it once, at its better rank.
      if (item.arms[arm] !== undefined) continue;
      item.arms[arm] = { rank: entry.rank, score: entry.score };
      item.score += 1 / (k + entry.rank);
      item.best = Math.min(item.best, entry.rank);
    }
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || a.firstArm - b.firstArm || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ id, score, arms }) => ({ id, score, arms }));
}
