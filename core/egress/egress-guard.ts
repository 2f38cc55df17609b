import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { describeFetchTarget, describeNodeTarget, refuseUndeclaredEgress, wrap } from './egress-refusal.js';
import { guardSockets } from './socket-guard.js';
import { guardWorkers } from './worker-guard.js';

let installed = false;

const DNS_QUERIES = ['lookup', 'lookupService', 'reverse', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCaa', 'resolveCname', 'resolveMx',
  'resolveNaptr', 'resolveNs', 'resolvePtr', 'resolveSoa', 'resolveSrv', 'resolveTxt'] as const;

/**
 * Makes undeclared egress fail: while an action that does not declare `dataEgress` runs, the kernel
 * refuses, and reports, every way out it can see: global `fetch`, `http`/`https` requests, any TCP
 * or IPC socket connection (which is what `http.ClientRequest`, `tls`, `http2`, WebSocket and undici
 * use underneath), a write to a socket a plugin opened earlier (in `activate`, or in another action),
 * UDP sends, DNS lookups (a lookup can carry data in the name), and the same in any worker thread the
 * action starts. In-process, this is defence in depth against mistakes, not a sandbox: a child process,
 * a native addon or deliberate evasion is not covered (untrusted plugins run in a process of their
 * own for that). Installed once per thread; idempotent.
 */
export function installEgressGuard(): void {
  if (installed) return;
  installed = true;
  guardFetch();
  for (const module of [http, https]) {
    wrap(module, 'request', (args) => describeNodeTarget(args[0]));
    wrap(module, 'get', (args) => describeNodeTarget(args[0]));
  }
  guardSockets();
  wrap(dgram.Socket.prototype, 'send', (args) => `udp://${String(args.find((arg) => typeof arg === 'string') ?? 'unknown')}`);
  // Every query, on both modules and on their Resolver classes (a `new Resolver().resolveTxt(...)`, a
  // PTR, SOA, NAPTR or CAA query, `reverse` and `lookupService` all went out unchecked).
  for (const name of DNS_QUERIES) {
    wrap(dns, name, (args) => `dns:${String(args[0])}`);
    wrap(dns.promises, name, (args) => `dns:${String(args[0])}`);
  }
  for (const name of DNS_QUERIES.filter((query) => query !== 'lookup' && query !== 'lookupService')) {
    wrap(dns.Resolver.prototype, name as keyof dns.Resolver & string, (args) => `dns:${String(args[0])}`);
    wrap(dns.promises.Resolver.prototype, name as keyof dns.promises.Resolver & string, (args) => `dns:${String(args[0])}`);
  }
  guardWorkers();
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
