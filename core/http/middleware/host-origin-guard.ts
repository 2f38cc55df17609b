import type { MiddlewareHandler } from 'hono';
import { httpError } from '../error-response.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1', '[::1]'];

export interface HostOriginOptions {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

/**
 * Refuses requests whose Host is not ours (DNS rebinding) and browser requests from another origin.
 * Host is compared by name only (any port); an Origin must be the request's own origin or configured.
 */
export function hostOriginGuard(options: HostOriginOptions): MiddlewareHandler {
  const hosts = new Set([...LOOPBACK_NAMES, ...options.allowedHosts].map((name) => name.toLowerCase()));
  const origins = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()));
  return async (c, next) => {
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
