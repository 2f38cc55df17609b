import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import type { McpEndpoint } from '../../mcp/mcp-endpoint.js';
import type { HttpEnv } from '../http-env.js';

/**
 * `/mcp` (core/mcp/mcp-endpoint.ts), imported on the first request: the MCP SDK costs 100-200 ms to
 * load, which every start would pay whether or not an MCP client ever connects.
 */
export function mcpRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  let endpoint: Promise<McpEndpoint> | undefined;
  app.all('/', async (c) => {
    endpoint ??= import('../../mcp/mcp-endpoint.js').then(
      ({ openMcpEndpoint }) => openMcpEndpoint(kernel),
      (error: unknown) => { endpoint = undefined; throw error; },
    );
    return (await endpoint)(c);
  });
  return app;
}
