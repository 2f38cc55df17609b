import { KernelError } from '../errors.js';
import { currentAction } from './action-scope.js';

/**
 * Refuses, and reports for the audit, a way out taken by an action that does not declare `dataEgress`.
 * Code outside any action (the kernel's own, a trusted plugin's timers) is not refused.
 */
export function refuseUndeclaredEgress(target: string): void {
  const action = currentAction();
  if (!action || action.declaredEffects.includes('dataEgress')) return;
  action.onRefused('egress', target);
  const who = action.label ?? `action ${action.plugin}/${action.tool}/${action.action}`;
  throw new KernelError(
    'EGRESS_DENIED',
    `${who} does not declare 'dataEgress' and may not reach ${target}`,
    { details: { plugin: action.plugin, tool: action.tool, action: action.action, target } },
  );
}

/** Replaces `target[name]` with a function that checks first, then calls the original with the same `this`. */
export function wrap<T extends object>(target: T, name: keyof T & string, describe: (args: unknown[]) => string): void {
  const original = target[name];
  if (typeof original !== 'function') return;
  const guarded = function guarded(this: unknown, ...args: unknown[]): unknown {
    refuseUndeclaredEgress(describe(args));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  Object.defineProperty(target, name, { value: guarded, writable: true, configurable: true, enumerable: true });
}

export function describeFetchTarget(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return originOf(input);
  if (input instanceof URL) return input.origin;
  return originOf(input.url);
}

export function describeNodeTarget(first: unknown): string {
  if (typeof first === 'string') return originOf(first);
  if (first instanceof URL) return first.origin;
  const options = (first ?? {}) as { hostname?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  const host = String(options.hostname ?? options.host ?? 'localhost');
  return `${String(options.protocol ?? 'http:')}//${host}${options.port ? `:${String(options.port)}` : ''}`;
}

export function describeSocketTarget(first: unknown, second: unknown): string {
  // socket.connect(options | port, host? | path)
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return `tcp://${typeof second === 'string' ? second : 'localhost'}:${String(first)}`;
  if (typeof first === 'string') return `ipc://${first}`;
  const options = (Array.isArray(first) ? first[0] : first ?? {}) as { host?: unknown; port?: unknown; path?: unknown };
  if (options.path !== undefined) return `ipc://${String(options.path)}`;
  return `tcp://${String(options.host ?? 'localhost')}:${String(options.port ?? '')}`;
}

// Only the origin is reported: paths and query strings can carry the data being sent.
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(unparsable URL)';
  }
}
