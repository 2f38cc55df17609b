/**
 * Helpers for JSON values held in memory by the session store. A frozen value is taken as immutable
 * everywhere: the store shares the documents it caches instead of copying them, and derived values
 * (model messages, token counts) are remembered by the identity of the frozen object they come from.
 */

/** Freezes `value` and everything reachable from it; parts already frozen are not walked again. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Whether two values serialise to the same JSON up to key order (a key whose value is `undefined`
 * counts as absent, as JSON.stringify drops it). Cheaper than serialising both: it stops at the first
 * difference and compares equal strings without copying them. Objects of other classes (a Date) are
 * never equal unless identical: telling their JSON apart is not worth it, and unequal only costs a write.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] ?? null, other[i] ?? null)) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(left)) {
    if (left[key] === undefined) continue;
    count++;
    if (!jsonEqual(left[key], right[key])) return false;
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) count--;
  return count === 0;
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === Array.prototype || prototype === null;
}

/**
 * The first `count` items of `items` as a new array. A spread, then cut: `slice` on a frozen array
 * (the store's) takes V8's slow path, some sixty times slower for a history of 10,000 entries.
 */
export function copyPrefix<T>(items: readonly T[], count: number): T[] {
  const copy = [...items];
  copy.length = Math.min(count, copy.length);
  return copy;
}
