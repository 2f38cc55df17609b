import { KernelError } from '../errors.js';

/**
 * Where a result is not what JSON carries, or undefined when all of it is: a BigInt, a function, a
 * symbol, NaN or an infinity, a Map, a Set or another class's object, a cycle. A plugin's such result
 * was answered `500 internal error` over HTTP (naming nobody, audited as ok), a bare INTERNAL over MCP,
 * or, in process, lost its function or Map without a word. Plain objects, arrays, strings, finite
 * numbers, booleans and null pass; so do objects with their own `toJSON` (a Date, a Buffer), and
 * undefined, which JSON leaves out (a property) or writes as null.
 */
export function notJson(value: unknown): { path: string; what: string } | undefined {
  const onPath = new Set<object>();
  // Each object is walked once: a graph that shares its objects (o = { a: o', b: o' }, nested) doubled
  // the work at each level, and held the kernel's event loop for seconds from a message of 250 bytes.
  const checked = new WeakSet<object>();
  const visit = (item: unknown, path: string, depth: number): { path: string; what: string } | undefined => {
    switch (typeof item) {
      case 'string': case 'boolean': case 'undefined': return undefined;
      case 'number': return Number.isFinite(item) ? undefined : { path, what: String(item) };
      case 'bigint': return { path, what: 'a BigInt' };
      case 'function': return { path, what: 'a function' };
      case 'symbol': return { path, what: 'a symbol' };
    }
    if (item === null) return undefined;
    const object = item as object;
    if (typeof (object as { toJSON?: unknown }).toJSON === 'function') return undefined;
    if (depth > MAX_DEPTH) return { path, what: `nesting deeper than ${MAX_DEPTH}` };
    if (onPath.has(object)) return { path, what: 'a cycle (an object inside itself)' };
    if (checked.has(object)) return undefined;
    const proto = Object.getPrototypeOf(object) as object | null;
    if (!Array.isArray(object) && proto !== Object.prototype && proto !== null) return { path, what: `a ${object.constructor?.name ?? 'class'} object` };
    onPath.add(object);
    try {
      for (const [key, inner] of Object.entries(object)) {
        const found = visit(inner, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
        if (found) return found;
      }
      checked.add(object);
      return undefined;
    } finally {
      onPath.delete(object);
    }
  };
  return visit(value, '', 0);
}

const MAX_DEPTH = 256;

/** A plugin's result refused when JSON cannot carry it, saying what and where. */
export function assertJsonResult(pluginId: string, wireName: string, value: unknown): void {
  const bad = notJson(value);
  if (bad) throw new KernelError('PLUGIN_ERROR', `[plugin ${pluginId}] ${wireName} returned ${bad.what} at '${bad.path || '/'}', which JSON cannot carry; it may have had effects, do not retry blindly`, { details: { plugin: pluginId, path: bad.path } });
}
