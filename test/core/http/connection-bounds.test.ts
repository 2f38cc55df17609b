import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_connection-bounds-admin';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }] };

/** A socket written by hand, and everything it received until the server closed it. */
interface Conversation {
  socket: Socket;
  received(): string;
  /** Settles when the server ends or resets the connection. */
  closed: Promise<void>;
}

function open(port: number): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => Buffer.concat(chunks).toString('latin1'), closed }));
    socket.once('error', reject);
  });
}

/** Sends a whole request and waits for one complete response (status line, headers, a JSON body by length). */
async function exchange(conversation: Conversation, request: string): Promise<number> {
  const before = conversation.received().length;
  conversation.socket.write(request);
  for (;;) {
    const text = conversation.received().slice(before);
    const end = text.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
    if (end !== -1 && length !== undefined && text.length >= end + 4 + Number(length)) return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
    const ended = await Promise.race([conversation.closed.then(() => true), new Promise<boolean>((done) => setTimeout(() => done(false), 20))]);
    if (ended && conversation.received().length === before + text.length) return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  }
}

const get = (path: string, headers: string[] = ['Host: 127.0.0.1']): string => `GET ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;

describe('connections and headers the server refuses', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(server: KernelConfigFile['server'] = {}): Promise<number> {
    const kernel = await harness.boot({ config: { auth, server } });
    const running = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(running);
    return running.port;
  }

  async function connection(port: number): Promise<Conversation> {
    const conversation = await open(port);
    sockets.push(conversation.socket);
    return conversation;
  }

  it('answers 400 to a request with more than one Host header, whichever comes first', async () => {
    const port = await serve();
    const cases = [
      ['Host: 127.0.0.1', 'Host: evil.example'],
      ['Host: evil.example', 'Host: 127.0.0.1'],
      ['Host: 127.0.0.1', 'host: 127.0.0.1'],
      ['Host: localhost', 'Authorization: Bearer x', 'HOST: localhost:9'],
      ['Host: 127.0.0.1', 'Host:'],
      ['Host: 127.0.0.1', 'Host: 127.0.0.1', 'Host: 127.0.0.1'],
    ];
    const statuses: unknown[] = [];
    for (const path of ['/healthz', '/api/plugins', '/mcp']) {
      for (const headers of cases) {
        const conversation = await connection(port);
        statuses.push([path, headers.join(' | '), await exchange(conversation, get(path, [...headers, 'Connection: close']))]);
      }
    }
    expect(statuses).toEqual(statuses.map((entry) => [(entry as unknown[])[0], (entry as unknown[])[1], 400]));
    const single = await connection(port);
    expect(await exchange(single, get('/healthz'))).toBe(200);
  });
});
