import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import type { HttpEnv } from '../http-env.js';
import type { JsonSchema } from '../openapi/openapi-types.js';
import { bodyValidator, readJsonBody } from '../read-body.js';

export const APPROVE_TOOL_BODY: JsonSchema = {
  type: 'object',
  required: ['hash'],
  additionalProperties: false,
  properties: { hash: { type: 'string', minLength: 1, maxLength: 200 } },
};
const parseApproval = bodyValidator<{ hash: string }>(APPROVE_TOOL_BODY);

/**
 * External MCP servers (administrators only): their state, the exact command or URL, the tools offered,
 * and the tools whose definition changed since it was pinned, which a person approves here.
 */
export function mcpServerRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json({ servers: kernel.externalMcp.describe() }));
  // The body names the definition approved ({ "hash" } from `pending`): a newer one is not approved unseen.
  app.post('/:name/tools/:tool/approve', async (c) => {
    const { hash } = parseApproval(await readJsonBody(c));
    await kernel.externalMcp.approve(c.req.param('name'), c.req.param('tool'), hash);
    return c.json({ server: kernel.externalMcp.describe().find((server) => server.name === c.req.param('name')) });
  });
  return app;
}
