import { serve, type ServerType } from '@hono/node-server';
import type { ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectionLimits } from '../config/kernel-config.js';
import type { Kernel } from '../kernel.js';
import { createHttpApp } from './app.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves the kernel over HTTP on its configured host and port (port 0 picks a free one). */
export function startHttpServer(kernel: Kernel, overrides: { host?: string; port?: number } = {}): Promise<RunningServer> {
  const app = createHttpApp(kernel);
  const host = overrides.host ?? kernel.config.server.host;
  const port = overrides.port ?? kernel.config.server.port;
  const limits = kernel.config.server;
  return new Promise((resolve, reject) => {
    let server: ServerType;
    const onError = (error: Error): void => reject(error);
    server = serve({ fetch: app.fetch, hostname: host, port, serverOptions: serverOptions(limits) }, (info: AddressInfo) => {
      server.off('error', onError);
      const shown = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shown}:${info.port}`,
        port: info.port,
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          if ('closeAllConnections' in server) server.closeAllConnections();
        }),
      });
    });
    server.once('error', onError);
    // Past the bound Node closes a new connection at once: the ones open are served, not starved.
    server.maxConnections = limits.maxConnections;
  });
}

/**
 * A client that sends its request slowly (a byte a second, headers that never end, nothing at all)
 * holds a connection and its memory for as long as it likes unless the request has a deadline. Node
 * enforces the deadlines only when it checks its connections, every 30 s by default: checked at a
 * quarter of the shorter one here (at most every second), so a deadline means about what it says.
 * The answer is not bounded by these: an action may take longer than its request took to arrive.
 */
function serverOptions(limits: Required<ConnectionLimits>): ServerOptions {
  const requestTimeout = limits.requestTimeoutMs;
  // Node refuses a headers deadline later than the request's; the request's already covers it then.
  const headersTimeout = Math.min(limits.headersTimeoutMs, requestTimeout);
  return { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeout / 4))) };
}
