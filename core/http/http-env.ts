import type { Principal } from '../plugin-api.js';

/** Hono context variables set by the middleware. */
export interface HttpEnv {
  Variables: { principal: Principal };
}
