import type { Context } from 'hono';
import type { HttpEnv } from '../http-env.js';

/** What a page of a configured origin may send: the token, JSON, MCP's session and stream headers. */
const ALLOW_HEADERS = 'authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, prefer';
/** What it may read of an answer besides the simple headers: MCP's session, where a job is, why a refusal. */
const EXPOSE_HEADERS = 'mcp-session-id, mcp-protocol-version, location, content-disposition, www-authenticate, retry-after';
const ALLOW_METHODS = 'GET, POST, PUT, DELETE';
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600';

/**
 * CORS for the origins the person configured (`server.allowedOrigins`), and for those only: without
 * it a browser sends their requests (the guard lets them in) but hides every answer from the page,
 * and its preflight, which carries no token, was refused `401`. The answer's headers are set on
 * `c.res`, so that Hono carries them onto whatever the route or the error handler answers.
 *
 * No `Access-Control-Allow-Credentials`: the API is called with a bearer token, never cookies. A
 * page of a public origin reaching this loopback server asks Chromium's private network question
 * (`Access-Control-Request-Private-Network`); the configured origin is trusted, so the answer is yes.
 *
 * Returns the preflight's answer, or undefined when the request goes on to its route.
 */
export function answerCrossOrigin(c: Context<HttpEnv>, origin: string): Response | undefined {
  const headers = c.res.headers;
  // `Vary: Origin` is the guard's, added to every answer while origins are configured (and to this preflight here).
  headers.set('access-control-allow-origin', origin);
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
    headers.set('vary', 'Origin');
    headers.set('access-control-allow-methods', ALLOW_METHODS);
    headers.set('access-control-allow-headers', ALLOW_HEADERS);
    headers.set('access-control-max-age', PREFLIGHT_MAX_AGE);
    if (c.req.header('access-control-request-private-network') === 'true') headers.set('access-control-allow-private-network', 'true');
    return new Response(null, { status: 204, headers });
  }
  headers.set('access-control-expose-headers', EXPOSE_HEADERS);
  return undefined;
}
