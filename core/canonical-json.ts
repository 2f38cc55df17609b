import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal values always give equal text (and hashes). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    // defineProperty, not assignment: `sorted['__proto__'] = x` would set the prototype and drop the
    // key from the text, so two different argument objects could hash alike.
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      Object.defineProperty(sorted, key, { value: sortKeys((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return sorted;
  }
  return value;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The hash that binds a confirmation's answer to the exact arguments the person saw. */
export function hashArguments(args: unknown): string {
  return sha256Hex(canonicalJson(args ?? {}));
}
