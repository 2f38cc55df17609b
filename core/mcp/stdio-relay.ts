import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
  ResourceUpdatedNotificationSchema, SubscribeRequestSchema, ToolListChangedNotificationSchema, UnsubscribeRequestSchema, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { KERNEL_VERSION } from '../paths.js';

/**
 * `quire mcp` beside a kernel that already serves the workspace: the stdio side is an MCP server whose
 * tools are the serving kernel's, each request relayed to its `/mcp` over loopback (same tools, same
 * gate, same audit). The relay connects once the stdio client has said who it is, under that client's
 * name, so the kernel names the caller as that client. Progress and cancellation pass through.
 */
export async function relayStdioToKernel(stdio: Transport, url: string, token: string): Promise<{ closed: Promise<void> }> {
  const server = new Server({ name: 'quire', version: KERNEL_VERSION }, { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} } });
  let upstream: Promise<Client> | undefined;
  const connect = (): Promise<Client> => {
    upstream ??= (async () => {
      const client = new Client({ name: server.getClientVersion()?.name ?? 'quire-mcp-stdio', version: server.getClientVersion()?.version ?? KERNEL_VERSION });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => { void server.sendToolListChanged().catch(() => undefined); });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => { void server.sendResourceUpdated(notification.params).catch(() => undefined); });
      // The kernel going away ends the relay: the client sees its server close, and may start it again.
      client.onclose = () => { void server.close().catch(() => undefined); };
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client;
    })();
    // A failed connection is tried again by the next request, not kept.
    upstream.catch(() => { upstream = undefined; });
    return upstream;
  };
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => (await connect()).listTools(request.params, { signal: extra.signal }));
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => (await connect()).listResources(request.params, { signal: extra.signal }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request, extra) => (await connect()).listResourceTemplates(request.params, { signal: extra.signal }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => (await connect()).readResource(request.params, { signal: extra.signal }));
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => (await connect()).subscribeResource(request.params, { signal: extra.signal }));
  server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => (await connect()).unsubscribeResource(request.params, { signal: extra.signal }));
  server.setRequestHandler(ListPromptsRequestSchema, async (request, extra) => (await connect()).listPrompts(request.params, { signal: extra.signal }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => (await connect()).getPrompt(request.params, { signal: extra.signal }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const client = await connect();
    const progressToken = request.params._meta?.progressToken;
    const result = await client.callTool({ name: request.params.name, ...(request.params.arguments ? { arguments: request.params.arguments } : {}) }, undefined, {
      signal: extra.signal,
      // A long call's progress keeps the relayed request alive and reaches the client that asked for it.
      ...(progressToken !== undefined ? {
        resetTimeoutOnProgress: true,
        onprogress: (progress) => { void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, ...progress } }).catch(() => undefined); },
      } : {}),
      timeout: 24 * 3_600_000,
    });
    return result as CallToolResult;
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      void upstream?.then((client) => client.close()).catch(() => undefined);
      resolve();
    };
  });
  await server.connect(stdio);
  return { closed };
}
