import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { KernelError } from '../../errors.js';
import type { Kernel } from '../../kernel.js';
import { createMcpServer } from '../../mcp/mcp-server.js';
import type { McpSessions } from '../../mcp/mcp-sessions.js';
import type { HttpEnv } from '../http-env.js';
import { readJsonBody } from '../read-body.js';

/**
 * `/mcp`: the kernel as an MCP server over Streamable HTTP (administrators only; the caller's guards
 * run first). A POST without a session id must be `initialize` and opens a session; everything else
 * names its session, which only the token that opened it may use.
 */
export function mcpRoutes(kernel: Kernel, sessions: McpSessions): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.all('/', async (c) => {
    const principal = c.get('principal');
    // Sessions belong to the token itself (its digest), not to its name, which two tokens may share.
    const token = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    const owner = createHash('sha256').update(token).digest('hex');
    const id = c.req.header('mcp-session-id');
    const body = c.req.method === 'POST' ? await readJsonBody(c) : undefined;
    if (id === undefined) {
      if (c.req.method !== 'POST' || !isInitializeRequest(body)) {
        throw new KernelError('INVALID_INPUT', 'a request without an Mcp-Session-Id header must be an initialize request', { details: { header: 'mcp-session-id' } });
      }
      const server = createMcpServer(kernel, { kind: 'mcp', name: principal.name, role: principal.role });
      const transport = await sessions.open(owner, server);
      return transport.handleRequest(c.req.raw, { parsedBody: body });
    }
    const answered = await sessions.handle(id, owner, (transport) => transport.handleRequest(c.req.raw, body === undefined ? {} : { parsedBody: body }));
    if (!answered) throw new KernelError('NOT_FOUND', 'no such MCP session (it may have expired): initialize a new one', { details: { header: 'mcp-session-id' } });
    return answered;
  });
  return app;
}
