import type { MiddlewareHandler } from 'hono';
import { KernelError } from '../../errors.js';
import type { Principal, Role } from '../../plugin-api.js';
import type { HttpEnv } from '../http-env.js';

/** Lets only the given role through (after the request guard set the principal). */
export function requireRole(role: Role): MiddlewareHandler<HttpEnv> {
  return (c, next) => {
    const principal: Principal = c.get('principal');
    if (principal.role !== role) throw new KernelError('FORBIDDEN', `this needs the '${role}' role; token '${principal.name}' has '${principal.role}'`);
    return next();
  };
}
