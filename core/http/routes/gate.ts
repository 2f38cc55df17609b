import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import { NOTEBOOK_SCOPE, type NotebookPrivacy, type NotebookScope } from '../../gate/notebook-scope.js';
import type { HttpEnv } from '../http-env.js';

/**
 * `GET /api/gate`: what limits the agent, in one answer: the deny rules and auto mode of quire.json, the
 * number of standing grants, and each notebook's privacy (what the agent may do there, whether its
 * text may leave the machine). Admin only: it names every notebook.
 */
export function gateRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => {
    const scope = kernel.container.isRegistered(NOTEBOOK_SCOPE, true) ? kernel.container.resolve<NotebookScope>(NOTEBOOK_SCOPE) : undefined;
    const notebooks: NotebookPrivacy[] = scope ? scope.privacy() : [];
    return c.json({
      allowAutoMode: kernel.config.gate.allowAutoMode,
      deny: kernel.config.gate.deny,
      grants: kernel.grants.list().length,
      notebooks,
    });
  });
  return app;
}
