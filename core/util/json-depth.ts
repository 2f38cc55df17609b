import { escapePointer } from '../schema/ajv.js';

/**
 * How deep a JSON value from outside may nest. Far more than any real body needs (a session entry's
 * tool call arguments sit at depth 6), and far less than what overflows the stack of the recursive
 * walks done later (JSON.stringify, canonical hashing, ajv): about 4,000 levels.
 */
export const MAX_JSON_DEPTH = 100;

interface Frame { value: unknown; depth: number; key: string; parent: Frame | undefined }

/**
 * The path (keys and indexes) to the first place where `value` nests deeper than `maxDepth`, or
 * undefined when it does not. Iterative on purpose: a recursive walk would overflow the stack on the
 * very values it is meant to catch.
 */
export function pathPastDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): string[] | undefined {
  const stack: Frame[] = [{ value, depth: 0, key: '', parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (typeof frame.value !== 'object' || frame.value === null) continue;
    if (frame.depth >= maxDepth) return pathOf(frame);
    const entries: [string, unknown][] = Array.isArray(frame.value)
      ? frame.value.map((item, index) => [String(index), item])
      : Object.entries(frame.value);
    for (const [key, child] of entries) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return undefined;
}

function pathOf(frame: Frame): string[] {
  const path: string[] = [];
  for (let at: Frame | undefined = frame; at?.parent !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/** A JSON pointer for a path, shortened in the middle when long: a 10,000-deep path is not worth sending. */
export function shortPointer(path: readonly string[], keep = 8): string {
  const parts = path.map((segment) => `/${escapePointer(segment.length > 100 ? `${segment.slice(0, 100)}…` : segment)}`);
  if (parts.length <= keep * 2) return parts.join('');
  return `${parts.slice(0, keep).join('')}/…(${parts.length - keep * 2} more)…${parts.slice(-keep).join('')}`;
}
