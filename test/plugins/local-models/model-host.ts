import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A loopback stand-in for the Hugging Face Hub: serves `<root>/<org>/<name>/<file>` at
 * `/<org>/<name>/resolve/main/<file>` (with Content-Length, as the Hub does), 404 otherwise, and
 * records every request. `failFile` makes one file fail half-way (the connection drops).
 */
export class ModelHost {
  readonly requests: string[] = [];
  failFile: string | undefined;

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(root: string): Promise<ModelHost> {
    let host: ModelHost | undefined;
    const server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
      host!.requests.push(`${request.method ?? 'GET'} ${path}`);
      const match = /^\/([^/]+)\/([^/]+)\/resolve\/main\/(.+)$/.exec(path);
      const file = match ? join(root, match[1]!, match[2]!, match[3]!) : undefined;
      if (!file || file.includes('..') || !existsSync(file) || !statSync(file).isFile()) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
        return;
      }
      const size = statSync(file).size;
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
      if (request.method === 'HEAD') return void response.end();
      if (host!.failFile && path.endsWith(host!.failFile)) {
        response.write(Buffer.alloc(Math.min(1024, size - 1)));
        response.destroy();
        return;
      }
      createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = new ModelHost(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return host;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
