import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
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
  return new Promise((resolve, reject) => {
    let server: ServerType;
    const onError = (error: Error): void => reject(error);
    server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
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
  });
}
