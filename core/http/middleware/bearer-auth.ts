import type { MiddlewareHandler } from 'hono';
import type { Authenticator } from '../../auth/authenticator.js';
import { KernelError } from '../../errors.js';
import type { Principal, Role } from '../../plugin-api.js';
import type { HttpEnv } from '../http-env.js';
import { errorResponse } from '../error-response.js';

/** Requires `Authorization: Bearer <token>` matching a configured token; sets the principal. */
export function bearerAuth(authenticator: Authenticator): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    // No OAuth challenge (resource_metadata): these are static tokens, and a challenge would make
    // MCP clients start an OAuth flow the server cannot complete.
    if (!match?.[1]) {
      return errorResponse(c, new KernelError('UNAUTHENTICATED', 'an Authorization: Bearer token is required'), undefined,
        { 'www-authenticate': 'Bearer realm="quire"' });
    }
    const principal = authenticator.authenticate(match[1]);
    if (!principal) {
      return errorResponse(c, new KernelError('UNAUTHENTICATED', 'the bearer token is not valid'), undefined,
        { 'www-authenticate': 'Bearer realm="quire", error="invalid_token"' });
    }
    c.set('principal', principal);
    await next();
  };
}

/** Lets only the given role through (after bearerAuth). */
export function requireRole(role: Role): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const principal: Principal = c.get('principal');
    if (principal.role !== role) throw new KernelError('FORBIDDEN', `this needs the '${role}' role; token '${principal.name}' has '${principal.role}'`);
    await next();
  };
}
