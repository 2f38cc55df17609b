/**
 * What was computed over the last few arrays of frozen objects (a session's entries, its model messages),
 * so that the next array, which usually is the same history with a few items more, reuses the part it
 * shares instead of going over the whole history again. Sharing is by identity, and only frozen items
 * count (one that is not frozen may have changed since). Each history is a lineage: a copy of its items
 * owned here, with the caller's marks (a count, a running total) and output, cut back in place to what
 * the next array shares and extended by what it adds, so that a round copies nothing of the history.
 */
export interface Lineage<T, U> {
  /** The items as last seen (owned here: a caller's array may change). */
  readonly items: T[];
  /** How many leading items are frozen: only those may be shared (checked once, when added). */
  frozen: number;
  /** For each item, the caller's mark after it. */
  readonly marks: number[];
  /** The caller's output (marks may index into it). */
  readonly out: U[];
}

export interface Followed<T, U> {
  /** The lineage, cut back to the shared items: the caller pushes the marks (and output) of items[shared..]. */
  lineage: Lineage<T, U>;
  shared: number;
}

export class PrefixMemo<T extends object, U = never> {
  private readonly recent: Lineage<T, U>[] = [];

  /**
   * `outLength(marks, shared)`: how much of the output the first `shared` items made (the output is
   * cut back to it); `size`: how many lineages are kept.
   */
  constructor(private readonly outLength: (marks: readonly number[], shared: number) => number = () => 0, private readonly size = 8) {}

  /** The lineage `items` continues (or a new one), cut back to what they share with it. */
  follow(items: readonly T[]): Followed<T, U> {
    let best: Lineage<T, U> | undefined;
    let shared = 0;
    for (const known of this.recent) {
      // The same object as a frozen one is that frozen object: comparing references is enough.
      const limit = Math.min(known.frozen, items.length);
      let count = 0;
      while (count < limit && known.items[count] === items[count]) count++;
      if (count > shared) [best, shared] = [known, count];
    }
    const lineage: Lineage<T, U> = best ?? { items: [], frozen: 0, marks: [], out: [] };
    if (best) this.recent.splice(this.recent.indexOf(best), 1);
    lineage.out.length = this.outLength(lineage.marks, shared);
    lineage.items.length = shared;
    lineage.marks.length = shared;
    lineage.frozen = shared;
    this.recent.unshift(lineage);
    if (this.recent.length > this.size) this.recent.pop();
    return { lineage, shared };
  }

  /** Records items[shared..] in the lineage, once the caller has pushed their marks. */
  extend({ lineage, shared }: Followed<T, U>, items: readonly T[]): void {
    for (let i = shared; i < items.length; i++) lineage.items.push(items[i]!);
    while (lineage.frozen < lineage.items.length && Object.isFrozen(lineage.items[lineage.frozen])) lineage.frozen++;
  }
}
