import type { ActionHandler } from '../plugin-api.js';
import type { CompiledAction } from '../manifest/validate-manifest.js';

export type HandlerMatch =
  | { ok: true; handlers: Map<string, ActionHandler> }
  | { ok: false; missing: string[]; undeclared: string[] };

/**
 * Checks that `activate` returned exactly one function per declared action: no missing ones, no extra
 * ones. Keys come from plugin code, so only own properties are read, into a Map keyed by wire name.
 */
export function matchHandlers(declared: readonly CompiledAction[], returned: unknown): HandlerMatch {
  const found = new Map<string, ActionHandler>();
  const undeclared: string[] = [];
  const expected = new Map(declared.map((action) => [`${action.tool}.${action.action}`, action.wireName]));
  if (returned !== null && typeof returned === 'object') {
    for (const [tool, actions] of Object.entries(returned)) {
      if (actions === null || typeof actions !== 'object') {
        undeclared.push(`${tool} (not an object of handlers)`);
        continue;
      }
      for (const [action, handler] of Object.entries(actions as Record<string, unknown>)) {
        const wire = expected.get(`${tool}.${action}`);
        if (wire === undefined || typeof handler !== 'function') {
          undeclared.push(`${tool}.${action}${typeof handler === 'function' ? '' : ' (not a function)'}`);
          continue;
        }
        found.set(wire, handler as ActionHandler);
      }
    }
  }
  const missing = declared.filter((action) => !found.has(action.wireName)).map((action) => `${action.tool}.${action.action}`);
  if (missing.length > 0 || undeclared.length > 0) return { ok: false, missing, undeclared };
  return { ok: true, handlers: found };
}
