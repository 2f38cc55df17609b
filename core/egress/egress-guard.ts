import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { KernelError } from '../errors.js';
import { currentAction } from './action-scope.js';

let installed = false;

/**
 * Makes undeclared egress fail: while an action that does not declare `dataEgress` runs, global `fetch`
 * and the `http`/`https` request functions refuse and report it. Plugins run in-process, so this is
 * defence in depth against mistakes, not a sandbox. Installed once per process; idempotent.
 */
export function installEgressGuard(): void {
  if (installed) return;
  installed = true;
  const originalFetch = globalThis.fetch;
  globalThis.fetch = function guardedFetch(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
    try {
      refuseUndeclaredEgress(describeFetchTarget(input));
    } catch (error) {
      return Promise.reject(error);
    }
    return originalFetch(input, init);
  };
  for (const module of [http, https]) {
    const request = module.request;
    const get = module.get;
    // The exported functions are replaced on the module object; syncBuiltinESMExports makes named ESM
    // imports (`import { request } from 'node:http'`) see the guarded versions as well.
    module.request = function guardedRequest(this: unknown, ...args: unknown[]) {
      refuseUndeclaredEgress(describeNodeTarget(args[0]));
      return (request as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    } as typeof module.request;
    module.get = function guardedGet(this: unknown, ...args: unknown[]) {
      refuseUndeclaredEgress(describeNodeTarget(args[0]));
      return (get as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    } as typeof module.get;
  }
  syncBuiltinESMExports();
}

function refuseUndeclaredEgress(target: string): void {
  const action = currentAction();
  if (!action || action.declaredEffects.includes('dataEgress')) return;
  action.onRefused('egress', target);
  throw new KernelError(
    'EGRESS_DENIED',
    `action ${action.plugin}/${action.tool}/${action.action} does not declare 'dataEgress' and may not send a request to ${target}`,
    { details: { plugin: action.plugin, tool: action.tool, action: action.action, target } },
  );
}

function describeFetchTarget(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return originOf(input);
  if (input instanceof URL) return input.origin;
  return originOf(input.url);
}

function describeNodeTarget(first: unknown): string {
  if (typeof first === 'string') return originOf(first);
  if (first instanceof URL) return first.origin;
  const options = (first ?? {}) as { hostname?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  const host = String(options.hostname ?? options.host ?? 'localhost');
  return `${String(options.protocol ?? 'http:')}//${host}${options.port ? `:${String(options.port)}` : ''}`;
}

// Only the origin is reported: paths and query strings can carry the data being sent.
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(unparsable URL)';
  }
}
