import type { Context, MiddlewareHandler } from 'hono';
import type { Authenticator } from '../../auth/authenticator.js';
import { KernelError } from '../../errors.js';
import { errorResponse, httpError } from '../error-response.js';
import type { HttpEnv } from '../http-env.js';
import { answerCrossOrigin } from './cross-origin.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1', '[::1]'];

export interface RequestGuardOptions {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  bodyLimitBytes: number;
  authenticator: Authenticator;
}

/**
 * Everything a request must pass before a route sees it, in one synchronous step (three async
 * middlewares cost more than the action pipeline of a small call):
 * - Host must be ours (DNS rebinding), compared by name only (any port); more than one Host is refused
 *   (RFC 9112 §3.2 asks 400: which one a proxy in front used is unknown). An Origin must be the
 *   request's own origin or configured: browser requests from other sites are refused. A configured
 *   origin's requests get CORS answers (cross-origin.ts), its preflight before any token is asked.
 * - A declared Content-Length over the limit is refused before anything reads the body; the limit is
 *   recorded so that readJsonBody enforces it on a body sent without a length (chunked).
 * - `/api` and `/mcp` need `Authorization: Bearer <token>` matching a configured token; the principal
 *   is set for the routes. No OAuth challenge (resource_metadata): these are static tokens, and a
 *   challenge would make MCP clients start an OAuth flow the server cannot complete.
 */
export function requestGuard(options: RequestGuardOptions): MiddlewareHandler<HttpEnv> {
  const hosts = new Set([...LOOPBACK_NAMES, ...options.allowedHosts].map((name) => name.toLowerCase()));
  const origins = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()));
  const { bodyLimitBytes, authenticator } = options;
  return (c, next) => {
    const headers = guardHeaders(c);
    if (headers.hostCount > 1) {
      throw httpError('INVALID_INPUT', 'the request has more than one Host header (RFC 9112 §3.2)', { header: 'host' });
    }
    // HTTP/1.1 requests always carry Host; a request built in process (app.request) has only its URL.
    const host = (headers.host ?? new URL(c.req.url).host).toLowerCase();
    if (!hosts.has(hostName(host))) {
      throw httpError('ORIGIN_REFUSED', `Host '${host}' is not accepted; add it to server.allowedHosts in quire.json`);
    }
    // With origins configured, answers differ by Origin (CORS headers or not): a shared cache must know.
    // Added to the route's own Vary once it has answered (set before, Hono's merge replaced the web
    // app's `Vary: accept-encoding` on gzipped assets cached a year).
    const varies = origins.size > 0;
    if (headers.origin !== undefined) {
      const origin = headers.origin.toLowerCase();
      if (origins.has(origin)) {
        const preflight = answerCrossOrigin(c, headers.origin);
        if (preflight !== undefined) return Promise.resolve(preflight);
      } else if (origin !== `http://${host}` && origin !== `https://${host}`) {
        throw httpError('ORIGIN_REFUSED', `requests from origin '${origin}' are refused; add it to server.allowedOrigins in quire.json`);
      }
    }
    if (headers.contentLength !== undefined && Number(headers.contentLength) > bodyLimitBytes) throw tooLarge(bodyLimitBytes);
    c.set('bodyLimit', bodyLimitBytes);
    if (needsToken(c.req.path)) {
      const principal = headers.authorization === undefined ? undefined : authenticator.authenticateHeader(headers.authorization);
      if (!principal) {
        // Answered here, not thrown: its CORS headers go with it (the page reads why, not a network error).
        const cors = varies ? { ...Object.fromEntries(c.res.headers), vary: 'Origin' } : {};
        return Promise.resolve(headers.authorization === undefined || !/^Bearer\s+\S+\s*$/i.test(headers.authorization)
          ? errorResponse(c, new KernelError('UNAUTHENTICATED', 'an Authorization: Bearer token is required'), undefined, { ...cors, 'www-authenticate': 'Bearer realm="quire"' })
          : errorResponse(c, new KernelError('UNAUTHENTICATED', 'the bearer token is not valid'), undefined, { ...cors, 'www-authenticate': 'Bearer realm="quire", error="invalid_token"' }));
      }
      c.set('principal', principal);
    }
    if (!varies) return next();
    return next().then(() => { c.header('vary', 'Origin', { append: true }); });
  };
}

export function tooLarge(maxBytes: number): KernelError {
  // Said with the setting: an action's own limits (a note's 4,000,000 characters) are larger than the default 1 MiB.
  return new KernelError('PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes, the limit server.bodyLimitBytes sets in quire.json (an action's own limits may be larger; the CLI and the kernel's own agent do not pass through HTTP)`, { details: { limit: maxBytes, field: '/server/bodyLimitBytes' } });
}

/**
 * The API and MCP; `/healthz`, the API's own description (`/api/openapi.json`, `/api/docs`: no notes,
 * no secrets, and a browser cannot send a token to open a page) and unknown paths answer without one.
 */
function needsToken(path: string): boolean {
  if (path.startsWith('/api')) {
    if (path.length !== 4 && path.charCodeAt(4) !== 47 /* / */) return false;
    return path !== '/api/openapi.json' && path !== '/api/docs' && !path.startsWith('/api/docs/assets/');
  }
  return path === '/mcp';
}

function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

interface GuardHeaders {
  host: string | undefined;
  hostCount: number;
  origin: string | undefined;
  authorization: string | undefined;
  contentLength: string | undefined;
}

/**
 * The headers the guard reads, in one pass over the raw headers: the raw headers are the truth (Node
 * keeps the first Host in `headers.host`, the Request seen by routes joins repeated ones, and a proxy
 * in front may have used the last). A repeated header is joined with ", " as the Request joins it, so
 * it is refused where a single one would not be (an origin, a token). A request built in process
 * (app.request) has no raw headers; there a comma counts as a second Host, as it is never part of one.
 */
function guardHeaders(c: Context<HttpEnv>): GuardHeaders {
  const raw = c.env?.incoming?.rawHeaders;
  if (!raw) {
    const host = c.req.header('host');
    return { host, hostCount: host?.includes(',') ? 2 : 1, origin: c.req.header('origin'), authorization: c.req.header('authorization'), contentLength: c.req.header('content-length') };
  }
  const found: GuardHeaders = { host: undefined, hostCount: 0, origin: undefined, authorization: undefined, contentLength: undefined };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'host') {
          found.hostCount++;
          found.host = found.host === undefined ? value : `${found.host}, ${value}`;
        }
        break;
      case 6:
        if (name.toLowerCase() === 'origin') found.origin = found.origin === undefined ? value : `${found.origin}, ${value}`;
        break;
      case 13:
        if (name.toLowerCase() === 'authorization') found.authorization = found.authorization === undefined ? value : `${found.authorization}, ${value}`;
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') found.contentLength = found.contentLength === undefined ? value : `${found.contentLength}, ${value}`;
        break;
    }
  }
  return found;
}
