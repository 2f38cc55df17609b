import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import type { HttpEnv } from '../http-env.js';
import { readJsonBody } from '../read-body.js';

/**
 * External MCP servers (administrators only): their state, the exact command or URL, the tools offered,
 * and the tools whose definition changed since it was pinned, which a person approves here.
 */
export function mcpServerRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json({ servers: kernel.externalMcp.describe() }));
  // The body names the definition approved ({ "hash" } from `pending`): a newer one is not approved unseen.
  app.post('/:name/tools/:tool/approve', async (c) => {
    const body = await readJsonBody(c);
    await kernel.externalMcp.approve(c.req.param('name'), c.req.param('tool'), (body as { hash?: unknown }).hash);
    return c.json({ server: kernel.externalMcp.describe().find((server) => server.name === c.req.param('name')) });
  });
  return app;
}
