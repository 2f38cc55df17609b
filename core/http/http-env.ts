import type { HttpBindings } from '@hono/node-server';
import type { Principal } from '../plugin-api.js';

/** Hono context: the node bindings (absent under app.request in tests) and the middleware's variables. */
export interface HttpEnv {
  Bindings: Partial<HttpBindings>;
  Variables: { principal: Principal; bodyLimit: number };
}
