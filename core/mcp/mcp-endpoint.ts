import type { Context } from 'hono';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { KernelError } from '../errors.js';
import type { HttpEnv } from '../http/http-env.js';
import { readJsonBody } from '../http/read-body.js';
import type { Kernel } from '../kernel.js';
import { createMcpServer } from './mcp-server.js';
import { McpSessions } from './mcp-sessions.js';

export type McpEndpoint = (c: Context<HttpEnv>) => Promise<Response>;

/** Messages in one batch, for clients of protocol 2025-03-26 (the last that had batches). */
const MAX_BATCH = 20;

/**
 * `/mcp`: the kernel as an MCP server over Streamable HTTP (administrators only; the caller's guards
 * run first). A POST without a session id must be `initialize` and opens a session; everything else
 * names its session, which only the token that opened it may use. Loaded by the first `/mcp` request
 * (core/http/routes/mcp.ts): the SDK and zod under it are some 200 modules a start need not load.
 */
export function openMcpEndpoint(kernel: Kernel): McpEndpoint {
  const sessions = new McpSessions({ idleMs: kernel.config.mcp.sessionIdleMs, maxSessions: kernel.config.mcp.maxSessions });
  const unsubscribe = kernel.registry.onChange(() => sessions.notifyToolsChanged());
  // A backend coming or going makes tools available or not (tools/list leaves out those that cannot work).
  const unsubscribeBackends = kernel.backends.onChange(() => sessions.notifyToolsChanged());
  kernel.onClose(async () => { unsubscribe(); unsubscribeBackends(); await sessions.closeAll(); });
  // A long action's call keeps its event stream (progress, and bytes while it runs).
  const isLong = (tool: string): boolean => kernel.registry.get(tool)?.spec.long === true;
  return async (c) => {
    const principal = c.get('principal');
    // Sessions belong to the token itself (its digest, kept by the authenticator), not to its name, which two tokens may share.
    const owner = kernel.authenticator.headerDigest(c.req.header('authorization') ?? '')?.toString('hex') ?? '';
    const id = c.req.header('mcp-session-id');
    const body = c.req.method === 'POST' ? await readJsonBody(c) : undefined;
    // Batches went with protocol 2025-06-18; a client of the version before (which sends no version header,
    // or 2025-03-26) may still send them, 20 at most.
    const version = c.req.header('mcp-protocol-version');
    // An empty batch is one Invalid Request (JSON-RPC 2.0); it was answered 202 with nothing.
    if (Array.isArray(body) && body.length === 0) return c.json({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: an empty batch' }, id: null }, 400);
    if (Array.isArray(body) && ((version !== undefined && version !== '2025-03-26') || body.length > MAX_BATCH)) {
      throw new KernelError('INVALID_INPUT', `JSON-RPC batches are not accepted (the protocol removed them in 2025-06-18; under 2025-03-26, ${MAX_BATCH} messages at most)`, { details: { field: 'body' } });
    }
    if (id === undefined) {
      if (c.req.method !== 'POST' || !isInitializeRequest(body)) {
        throw new KernelError('INVALID_INPUT', 'a request without an Mcp-Session-Id header must be an initialize request', { details: { header: 'mcp-session-id' } });
      }
      // Checked before a session is opened: at the limit, opening one closes the least recently used.
      const accept = c.req.header('accept') ?? '';
      if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
        // The SDK's own answer to it, given here before anything is opened.
        return c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' }, id: null }, 406);
      }
      const server = createMcpServer(kernel, { kind: 'mcp', name: principal.name, role: principal.role });
      const transport = await sessions.open(owner, server);
      return transport.handleRequest(c.req.raw, { parsedBody: body });
    }
    const answered = await sessions.handle(id, owner, (transport) =>
      transport.answerAsJson({ body, accept: c.req.header('accept'), protocolVersion: c.req.header('mcp-protocol-version') }, isLong, c.req.raw.signal)
      ?? transport.http.handleRequest(c.req.raw, body === undefined ? {} : { parsedBody: body }));
    if (!answered) throw new KernelError('NOT_FOUND', 'no such MCP session (it may have expired): initialize a new one', { details: { header: 'mcp-session-id' } });
    return answered;
  };
}
