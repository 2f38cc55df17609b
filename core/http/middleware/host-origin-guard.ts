import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../error-response.js';
import type { HttpEnv } from '../http-env.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1', '[::1]'];

export interface HostOriginOptions {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

/**
 * Refuses requests whose Host is not ours (DNS rebinding) and browser requests from another origin.
 * Host is compared by name only (any port); an Origin must be the request's own origin or configured.
 */
export function hostOriginGuard(options: HostOriginOptions): MiddlewareHandler<HttpEnv> {
  const hosts = new Set([...LOOPBACK_NAMES, ...options.allowedHosts].map((name) => name.toLowerCase()));
  const origins = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()));
  return async (c, next) => {
    if (hostHeaderCount(c) > 1) {
      throw httpError('INVALID_INPUT', 'the request has more than one Host header (RFC 9112 §3.2)', { header: 'host' });
    }
    // HTTP/1.1 requests always carry Host; a request built in process (app.request) has only its URL.
    const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase();
    if (!hosts.has(hostName(host))) {
      throw httpError('ORIGIN_REFUSED', `Host '${host}' is not accepted; add it to server.allowedHosts in quire.json`);
    }
    const origin = c.req.header('origin')?.toLowerCase();
    if (origin !== undefined && !origins.has(origin) && origin !== `http://${host}` && origin !== `https://${host}`) {
      throw httpError('ORIGIN_REFUSED', `requests from origin '${origin}' are refused`);
    }
    await next();
  };
}

function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * How many Host headers the request carried. Node keeps the first for `headers.host`, the Request
 * seen here joins them, and a proxy in front may have used the last: which host was meant is
 * ambiguous, so such a request is refused whole (RFC 9112 requires 400). The raw headers are the
 * truth; a request built in process has none, and a comma is never part of one host.
 */
function hostHeaderCount(c: Context<HttpEnv>): number {
  const raw = c.env?.incoming?.rawHeaders;
  if (raw) {
    let count = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') count++;
    return count;
  }
  return c.req.header('host')?.includes(',') ? 2 : 1;
}
