import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
export async function relayStdioToKernel(stdio: Transport, url: string, token: string): Promise<{ closed: Promise<void>; settled(): Promise<void> }> {
  const server = new Server({ name: 'quire', version: KERNEL_VERSION }, { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} } });
  let upstream: Promise<Client> | undefined;
  /** Every client opened upstream, closed with the relay (one let go may still be closing). */
  const opened = new Set<Client>();
  const connect = (): Promise<Client> => {
    if (upstream) return upstream;
    const connecting: Promise<Client> = (async () => {
      const client = new Client({ name: server.getClientVersion()?.name ?? 'quire-mcp-stdio', version: server.getClientVersion()?.version ?? KERNEL_VERSION });
      opened.add(client);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => { void server.sendToolListChanged().catch(() => undefined); });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => { void server.sendResourceUpdated(notification.params).catch(() => undefined); });
      // The kernel going away ends the relay: the client sees its server close, and may start it again.
      client.onclose = () => { void server.close().catch(() => undefined); };
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      } catch (error) {
        // Closed, so that nothing of it (a stream it would open again) keeps the process from ending.
        client.onclose = undefined;
        void client.close().catch(() => undefined);
        throw error;
      }
      return client;
    })();
    upstream = connecting;
    // A failed connection is tried again by the next request, not kept.
    connecting.catch(() => { if (upstream === connecting) upstream = undefined; });
    return connecting;
  };
  /**
   * A request relayed upstream. The SDK's HTTP client never says its server went away (its `onclose`
   * fires only on its own close), so what a request meets says it: a session the kernel does not know
   * (it restarted, or swept the session while idle) is opened anew and the request sent once more (it was
   * refused, so it did not run); a kernel that cannot be reached ends the relay, so that the client sees
   * its server close and may start it again (it stayed open, every request failing, for good).
   */
  // Requests under way upstream: a client that sends its last requests and closes its end still gets
  // their answers (the relay closed at once and dropped them; the workspace opened directly answered).
  const inFlight = new Set<Promise<unknown>>();
  const relay = <T,>(work: (client: Client) => Promise<T>): Promise<T> => {
    const relayed = relayOnce(work);
    inFlight.add(relayed);
    void relayed.catch(() => undefined).finally(() => inFlight.delete(relayed));
    return relayed;
  };
  const relayOnce = async <T,>(work: (client: Client) => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      let client: Client | undefined;
      const connected = connect();
      try {
        client = await connected;
        return await work(client);
      } catch (error) {
        if (attempt === 0 && client && sessionGone(error)) {
          forget(connected, client);
          continue;
        }
        if (unreachable(error)) void server.close().catch(() => undefined);
        throw error;
      }
    }
  };
  /** The session the kernel no longer knows: let go once (requests refused together share the next). */
  const forget = (connected: Promise<Client>, client: Client): void => {
    if (upstream === connected) upstream = undefined;
    client.onclose = undefined;
    void client.close().catch(() => undefined);
  };
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) => relay((client) => client.listTools(request.params, { signal: extra.signal })));
  server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => relay((client) => client.listResources(request.params, { signal: extra.signal })));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) => relay((client) => client.listResourceTemplates(request.params, { signal: extra.signal })));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => relay((client) => client.readResource(request.params, { signal: extra.signal })));
  server.setRequestHandler(SubscribeRequestSchema, (request, extra) => relay((client) => client.subscribeResource(request.params, { signal: extra.signal })));
  server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) => relay((client) => client.unsubscribeResource(request.params, { signal: extra.signal })));
  server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => relay((client) => client.listPrompts(request.params, { signal: extra.signal })));
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) => relay((client) => client.getPrompt(request.params, { signal: extra.signal })));
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => relay(async (client) => {
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
  }));
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      for (const client of opened) {
        client.onclose = undefined;
        void client.close().catch(() => undefined);
      }
      resolve();
    };
  });
  await server.connect(stdio);
  const settled = async (): Promise<void> => {
    // A request arrives a moment after the one before it is read: settle until none is left, for at most
    // SETTLE_MS (a long call the client no longer waits for is then stopped by the close).
    const deadline = Date.now() + SETTLE_MS;
    while (inFlight.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => { timer = setTimeout(resolve, deadline - Date.now()); })]);
      clearTimeout(timer);
    }
  };
  return { closed, settled };
}

/** How long the requests a client sent before closing its end are waited for. */
const SETTLE_MS = 30_000;

/** The kernel answered 404 for the session: it does not know it (a restart, or swept while idle). */
function sessionGone(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** Nobody answers at the kernel's address (it stopped): fetch fails with a refused connection. */
function unreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return true;
  }
  return error instanceof TypeError && error.message === 'fetch failed';
}
