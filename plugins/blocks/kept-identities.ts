import type { Block } from './block-model.js';
import { touch } from './provenance.js';

/** Past this many pairs of children, the lists are matched by position only (the diff is quadratic). */
const MAX_DIFF_PAIRS = 250_000;

/**
 * A container updated from Markdown is parsed afresh, so each of its children would get a new id: an
 * agent that reads a list, changes one item and writes the list back would drop every item's attributes
 * (`custom-*`, name, alias, bookmark, created) and break every reference to them. Here the new children
 * take the ids and attributes of the old ones they stand for, recursively:
 * - a child whose whole subtree is unchanged (same types and text) keeps the old subtree as it was;
 * - between those, in a run of changes, each old child goes on as the new child of its type most like
 *   it (in order, alike enough): it keeps its id and attributes and is marked changed;
 * - the others are new blocks, and the old ones left over are gone.
 * `fresh` is changed in place; `old` is not (it is being replaced).
 */
export function keepIdentities(fresh: Block, old: Block, by: string, now: Date): void {
  const next = fresh.children;
  const before = old.children;
  if (!next || !before || next.length === 0 || before.length === 0) return;
  const memo = new Map<Block, string>();
  const matches = unchangedPairs(next, before, memo);
  let fromNext = 0;
  let fromBefore = 0;
  for (const [i, j] of [...matches, [next.length, before.length] as const]) {
    // A run of changes between two unchanged children: each old child goes on as the new one most like
    // it, in order, of its type (an edited item keeps its id even beside an inserted one).
    for (const [x, y] of similarPairs(next.slice(fromNext, i), before.slice(fromBefore, j))) {
      const a = next[fromNext + x]!;
      const b = before[fromBefore + y]!;
      a.id = b.id;
      a.attrs = { ...b.attrs };
      touch(a, by, now);
      keepIdentities(a, b, by, now);
    }
    if (i < next.length) next[i] = before[j]!;
    fromNext = i + 1;
    fromBefore = j + 1;
  }
}

/** A subtree's text alone (its structure is the same for every item of a list, and would make all alike). */
function textOf(block: Block): string {
  const parts = [block.content ?? '', ...(block.children ?? []).map(textOf)].filter((part) => part !== '');
  return parts.join('\n');
}

/** Below this likeness (0 to 1), a changed block is a new one rather than the old one edited. */
const MIN_LIKENESS = 0.3;
/** And it must share this many characters at its start and end: "- a" and "- b" are not one item edited. */
const MIN_SHARED = 4;
/** Past this many characters compared in one run of changes, its blocks are new (the pairing is quadratic). */
const MAX_COMPARED_CHARS = 20_000_000;

/** How alike two texts are: their common start and end against the longer one (0 to 1; 0 below MIN_SHARED). */
function likeness(a: string, b: string): number {
  const most = Math.max(a.length, b.length);
  if (most === 0) return 1;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return start + end < Math.min(MIN_SHARED, most) ? 0 : (start + end) / most;
}

/**
 * Pairs of a run of changed children, in order, each old one with at most one new one of its type and
 * alike enough, the pairs chosen to be as alike as possible in all (an alignment, quadratic in the run).
 */
function similarPairs(next: readonly Block[], before: readonly Block[]): [number, number][] {
  if (next.length === 0 || before.length === 0) return [];
  if (next.length * before.length > MAX_DIFF_PAIRS) return [];
  // Each text made once; a run whose comparisons could read more than the bound pairs nothing.
  const nextTexts = next.map(textOf);
  const beforeTexts = before.map(textOf);
  const nextChars = nextTexts.reduce((sum, text) => sum + text.length, 0);
  const beforeChars = beforeTexts.reduce((sum, text) => sum + text.length, 0);
  if (nextChars * before.length + beforeChars * next.length > MAX_COMPARED_CHARS) return [];
  const width = before.length + 1;
  const score = new Float64Array((next.length + 1) * width);
  const scores = new Float64Array(next.length * before.length);
  for (let i = 0; i < next.length; i++) {
    for (let j = 0; j < before.length; j++) {
      const alike = next[i]!.type === before[j]!.type ? likeness(nextTexts[i]!, beforeTexts[j]!) : 0;
      scores[i * before.length + j] = alike >= MIN_LIKENESS ? alike : -1;
    }
  }
  const pairScore = (i: number, j: number): number => scores[i * before.length + j]!;
  for (let i = next.length - 1; i >= 0; i--) {
    for (let j = before.length - 1; j >= 0; j--) {
      const paired = pairScore(i, j);
      score[i * width + j] = Math.max(score[(i + 1) * width + j]!, score[i * width + j + 1]!, paired < 0 ? 0 : paired + score[(i + 1) * width + j + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < next.length && j < before.length;) {
    const paired = pairScore(i, j);
    if (paired >= 0 && score[i * width + j] === paired + score[(i + 1) * width + j + 1]!) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (score[i * width + j] === score[(i + 1) * width + j]) i++;
    else j++;
  }
  return pairs;
}

/** What a subtree says (types and text, no ids or attributes): equal ones are the same content. */
function signature(block: Block, memo: Map<Block, string>): string {
  let known = memo.get(block);
  if (known === undefined) {
    known = JSON.stringify([block.type, block.subtype ?? null, block.content ?? null, block.checked ?? null, block.start ?? null, (block.children ?? []).map((child) => signature(child, memo))]);
    memo.set(block, known);
  }
  return known;
}

/** Index pairs of children unchanged between the two lists, in order: a longest common subsequence. */
function unchangedPairs(next: readonly Block[], before: readonly Block[], memo: Map<Block, string>): [number, number][] {
  const a = next.map((block) => signature(block, memo));
  const b = before.map((block) => signature(block, memo));
  if (a.length * b.length > MAX_DIFF_PAIRS) {
    const pairs: [number, number][] = [];
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] === b[i]) pairs.push([i, i]);
    return pairs;
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] = a[i] === b[j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) i++;
    else j++;
  }
  return pairs;
}
