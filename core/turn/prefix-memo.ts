/**
 * What was computed over the last few arrays of frozen objects (a session's entries, its model messages),
 * so that the next array, which usually is the same history with a few items more, reuses the part it
 * shares instead of going over the whole history again. Sharing is by identity, and only frozen items
 * count (one that is not frozen may have changed since). Finding the shared run compares references,
 * which is a small fraction of what the computation costs.
 */
export interface PrefixRun<U> {
  /** How many leading items the array shares with a remembered one. */
  shared: number;
  /** For each shared item, the mark remembered after it (a count, a running total). */
  marks: readonly number[];
  /** The output remembered with it (marks may index into it). */
  out: readonly U[];
  /** Which remembered array it was (-1: none). */
  slot: number;
}

interface Remembered<T, U> { items: readonly T[]; marks: number[]; out: U[] }

const EMPTY: PrefixRun<never> = { shared: 0, marks: [], out: [], slot: -1 };

export class PrefixMemo<T extends object, U = never> {
  private readonly recent: Remembered<T, U>[] = [];

  constructor(private readonly size = 8) {}

  lookup(items: readonly T[]): PrefixRun<U> {
    let best: PrefixRun<U> = EMPTY;
    for (const [slot, known] of this.recent.entries()) {
      const limit = Math.min(known.items.length, items.length);
      let shared = 0;
      while (shared < limit && known.items[shared] === items[shared] && Object.isFrozen(items[shared])) shared++;
      if (shared > best.shared) best = { shared, marks: known.marks, out: known.out, slot };
    }
    return best;
  }

  /**
   * Remembers `items` (copied: the caller may go on changing its array) with `marks` and `out`, kept as
   * given (pass arrays nothing changes). It replaces the array of `run` it grew from, so a session's
   * history takes one place, not one per turn; the oldest is forgotten.
   */
  remember(items: readonly T[], marks: number[], out: U[], run: PrefixRun<U>): void {
    if (run.slot >= 0) this.recent.splice(run.slot, 1);
    this.recent.unshift({ items: items.slice(), marks, out });
    if (this.recent.length > this.size) this.recent.pop();
  }
}
