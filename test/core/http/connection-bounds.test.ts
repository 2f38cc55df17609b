import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { parseKernelConfig, withDefaults, type KernelConfigFile } from '../../../core/config/kernel-config.js';
import { caught, useHarness } from '../../helpers/harness.js';

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

  async function serve(server: KernelConfigFile['server'] = {}, options: { plugins?: string[]; actions?: KernelConfigFile['actions'] } = {}): Promise<number> {
    const kernel = await harness.boot({ plugins: options.plugins ?? [], config: { auth, server, ...(options.actions ? { actions: options.actions } : {}) } });
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

  it('asks for the token on every /api path and on /mcp, and refuses a repeated Authorization header', async () => {
    const port = await serve();
    const statuses: unknown[] = [];
    const cases: [string, string[]][] = [
      ['/api', []], ['/api/plugins', []], ['/mcp', []], ['/api/plugins', ['Authorization: Bearer wrong']],
      ['/api/plugins', [`Authorization: Bearer ${ADMIN}`, `Authorization: Bearer ${ADMIN}`]],
      ['/api/plugins', [`Authorization: Bearer ${ADMIN}`, 'Authorization: Bearer wrong']],
      ['/api/plugins', [`Authorization: Bearer ${ADMIN}`]], ['/api/plugins', [`Authorization: bearer  ${ADMIN} `]],
      ['/api/plugins', [`Authorization: Bearer ${ADMIN}x`]], ['/healthz', []], ['/apix', []], ['/mcp/', []],
    ];
    // Twice: a header that authenticated once is remembered, and must answer the same the second time.
    for (let round = 0; round < 2; round++) {
      for (const [path, headers] of cases) {
        const conversation = await connection(port);
        statuses.push(`${path} ${headers.join(' | ')}: ${await exchange(conversation, get(path, ['Host: 127.0.0.1', ...headers, 'Connection: close']))}`);
      }
    }
    const expected = [401, 401, 401, 401, 401, 401, 200, 200, 401, 200, 404, 404];
    expect(statuses).toEqual([...cases, ...cases].map(([path, headers], index) => `${path} ${headers.join(' | ')}: ${expected[index % cases.length]}`));
  });

  /** Writes `pieces` one at a time, `gapMs` apart, until the server closes; how many were written. */
  async function trickle(conversation: Conversation, pieces: string[], gapMs: number): Promise<number> {
    let closed = false;
    void conversation.closed.then(() => { closed = true; });
    let written = 0;
    for (const piece of pieces) {
      if (closed) break;
      conversation.socket.write(piece);
      written++;
      await Promise.race([conversation.closed, new Promise((done) => setTimeout(done, gapMs))]);
    }
    return written;
  }

  const slowServer = { requestTimeoutMs: 1500, headersTimeoutMs: 1000 };
  const post = (path: string, headers: string[]): string =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\n${headers.join('\r\n')}\r\n\r\n`;

  it('closes a connection whose body trickles in a byte a second, with a length or chunked', async () => {
    const port = await serve(slowServer);
    const body = `{"name":"${'a'.repeat(28)}"}`;
    const byLength = await connection(port);
    byLength.socket.write(post('/api/actions/notes/note/get', [`Content-Length: ${body.length}`]));
    const sentByLength = await trickle(byLength, [...body], 1000);
    await byLength.closed;
    const chunked = await connection(port);
    chunked.socket.write(post('/api/actions/notes/note/get', ['Transfer-Encoding: chunked']));
    const sentChunked = await trickle(chunked, [...body].map((char) => `1\r\n${char}\r\n`), 1000);
    await chunked.closed;
    // Cut off long before the body could end (it has 40 bytes), answered 408 when the server could.
    expect([sentByLength < body.length, sentChunked < body.length]).toEqual([true, true]);
    for (const conversation of [byLength, chunked]) expect(conversation.received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('closes a connection whose headers never end, and one that sends nothing', async () => {
    const port = await serve(slowServer);
    const headers = await connection(port);
    const lines = ['GET /healthz HTTP/1.1\r\n', 'Host: 127.0.0.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: yes\r\n`)];
    const sent = await trickle(headers, lines, 1000);
    await headers.closed;
    expect(sent < lines.length).toBe(true);
    const silent = await connection(port);
    await silent.closed;
    expect(silent.received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('still serves a quick request in pieces, and an answer that takes longer than the request time', async () => {
    const port = await serve(slowServer, { plugins: ['blocker'], actions: { timeoutMs: 3000 } });
    const pieces = await connection(port);
    const request = `${post('/api/actions/nothing/here/at-all', ['Content-Length: 2'])}{}`;
    const written = trickle(pieces, [request.slice(0, 30), request.slice(30, 90), request.slice(90)], 100);
    expect(await exchange(pieces, '')).toBe(404);
    expect(await written).toBe(3);
    // The request is whole at once; its answer comes at the action's time limit, twice the request time.
    const long = await connection(port);
    expect(await exchange(long, `${post('/api/actions/blocker/job/wait', ['Content-Length: 2'])}{}`)).toBe(504);
  });

  it('refuses connections past server.maxConnections while the first ones are served', async () => {
    const port = await serve({ maxConnections: 3 });
    const first = [await connection(port), await connection(port), await connection(port)];
    for (const conversation of first) expect(await exchange(conversation, get('/healthz'))).toBe(200);
    const extra = await connection(port);
    await extra.closed;
    expect(extra.received()).toBe('');
    for (const conversation of first) expect(await exchange(conversation, get('/healthz'))).toBe(200);
    // A place freed is taken again.
    first[0]!.socket.destroy();
    await first[0]!.closed;
    let served = 0;
    for (let attempt = 0; attempt < 50 && served === 0; attempt++) {
      const next = await connection(port);
      served = await exchange(next, get('/healthz', ['Host: 127.0.0.1', 'Connection: close'])) === 200 ? 1 : 0;
    }
    expect(served).toBe(1);
  });

  it('reads the limits from quire.json, with defaults, and refuses values out of range', async () => {
    const file = parseKernelConfig({ server: { requestTimeoutMs: 2000, headersTimeoutMs: 1000, maxConnections: 3 } }, 'quire.json');
    expect(withDefaults(file).server).toMatchObject({ requestTimeoutMs: 2000, headersTimeoutMs: 1000, maxConnections: 3 });
    expect(withDefaults({}).server).toMatchObject({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 512 });
    for (const server of [{ maxConnections: 0 }, { requestTimeoutMs: 10 }, { headersTimeoutMs: 1.5 }, { requestTimeoutMs: '30s' }]) {
      const error = await caught(() => parseKernelConfig({ server }, 'quire.json'));
      expect([server, error.code]).toEqual([server, 'CONFIG_INVALID']);
    }
  });
});
