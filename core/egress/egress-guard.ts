import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { KernelError } from '../errors.js';
import { currentAction } from './action-scope.js';

let installed = false;

/**
 * Makes undeclared egress fail: while an action that does not declare `dataEgress` runs, the kernel
 * refuses, and reports, every way out it can see: global `fetch`, `http`/`https` requests, any TCP
 * or IPC socket connection (which is what `http.ClientRequest`, `tls`, `http2`, WebSocket and undici
 * use underneath), UDP sends and DNS lookups (a lookup can carry data in the name). Plugins run
 * in-process, so this is defence in depth against mistakes, not a sandbox: a child process or a
 * native addon is not covered. Installed once per process; idempotent.
 */
export function installEgressGuard(): void {
  if (installed) return;
  installed = true;
  guardFetch();
  for (const module of [http, https]) {
    wrap(module, 'request', (args) => describeNodeTarget(args[0]));
    wrap(module, 'get', (args) => describeNodeTarget(args[0]));
  }
  wrap(net.Socket.prototype, 'connect', (args) => describeSocketTarget(args[0], args[1]));
  wrap(dgram.Socket.prototype, 'send', (args) => `udp://${String(args.find((arg) => typeof arg === 'string') ?? 'unknown')}`);
  for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveTxt', 'resolveCname', 'resolveMx', 'resolveNs', 'resolveSrv'] as const) {
    wrap(dns, name, (args) => `dns:${String(args[0])}`);
    wrap(dns.promises, name, (args) => `dns:${String(args[0])}`);
  }
  // Named ESM imports (`import { request } from 'node:http'`) bind to copies; this refreshes them.
  syncBuiltinESMExports();
}

function guardFetch(): void {
  const originalFetch = globalThis.fetch;
  globalThis.fetch = function guardedFetch(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
    try {
      refuseUndeclaredEgress(describeFetchTarget(input));
    } catch (error) {
      return Promise.reject(error);
    }
    return originalFetch(input, init);
  };
}

/** Replaces `target[name]` with a function that checks first, then calls the original with the same `this`. */
function wrap<T extends object>(target: T, name: keyof T & string, describe: (args: unknown[]) => string): void {
  const original = target[name];
  if (typeof original !== 'function') return;
  const guarded = function guarded(this: unknown, ...args: unknown[]): unknown {
    refuseUndeclaredEgress(describe(args));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  Object.defineProperty(target, name, { value: guarded, writable: true, configurable: true, enumerable: true });
}

function refuseUndeclaredEgress(target: string): void {
  const action = currentAction();
  if (!action || action.declaredEffects.includes('dataEgress')) return;
  action.onRefused('egress', target);
  throw new KernelError(
    'EGRESS_DENIED',
    `action ${action.plugin}/${action.tool}/${action.action} does not declare 'dataEgress' and may not reach ${target}`,
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

function describeSocketTarget(first: unknown, second: unknown): string {
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
