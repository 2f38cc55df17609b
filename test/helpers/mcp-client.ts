import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach } from 'vitest';
import { startHttpServer, type RunningServer } from '../../core/http/serve.js';
import type { Kernel } from '../../core/kernel.js';

/** The real MCP SDK client, connected to a kernel's `/mcp` over loopback with a bearer token. */
export async function connectMcp(serverUrl: string, token: string, name = 'quire-test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/**
 * A fetch for the SDK's transport that says when its standing GET stream is open: the server keeps no
 * event store, so a notification sent before the client listens there is lost. Waiting for this, not
 * for a fixed time, makes a test of notifications hold on a loaded machine.
 */
export function fetchNotingStream(): { fetch: FetchLike; streamOpen: Promise<void> } {
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => { opened = resolve; });
  return {
    streamOpen,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if ((init?.method ?? 'GET') === 'GET' && response.ok && (response.headers.get('content-type') ?? '').includes('text/event-stream')) opened();
      return response;
    },
  };
}

/** Kernels served over loopback and MCP clients connected to them, all closed after each test. */
export function useMcpOverHttp() {
  const servers: RunningServer[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const server of servers.splice(0)) await server.close();
  });
  return {
    async listen(kernel: Kernel): Promise<RunningServer> {
      const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
      servers.push(server);
      return server;
    },
    async connect(url: string, token: string): Promise<Client> {
      const client = await connectMcp(url, token);
      clients.push(client);
      return client;
    },
  };
}
