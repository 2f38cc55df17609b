import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import type { UserPlugin } from '../../helpers/harness.js';
import { caught, useHarness } from '../../helpers/harness.js';

const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };

async function auditLines(kernel: Kernel): Promise<{ action: string; outcome: string; details?: { target?: string } }[]> {
  const text = await readFile(kernel.audit.logFile, 'utf8').catch(() => '');
  return text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { action: string; outcome: string });
}

async function value(kernel: Kernel, target: string, input: Record<string, unknown>): Promise<unknown> {
  const outcome = await kernel.pipeline.call({ target, input, principal: admin });
  if (outcome.status !== 'ok') throw new Error(`expected ok, got ${outcome.status}`);
  return outcome.value;
}

describe('egress guard: worker threads', () => {
  const harness = useHarness();
  let server: HttpServer;
  let url: string;
  let requests: number;

  beforeEach(async () => {
    requests = 0;
    server = createHttpServer((_request, response) => {
      requests += 1;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/leak`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses the network to a worker started by an action without dataEgress, and audits the attempt', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'] });
    expect(await value(kernel, 'leak_worker_quiet', { url })).toEqual({ error: 'EGRESS_DENIED' });
    expect(requests).toBe(0);
    await expect.poll(async () => (await auditLines(kernel)).map((line) => [line.action, line.outcome, line.details?.target])).toContainEqual(['worker_quiet', 'egress_denied', new URL(url).origin]);
  });

  it('guards a worker started from a module file the same way', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'] });
    expect(await value(kernel, 'leak_worker_file_quiet', { url })).toEqual({ error: 'EGRESS_DENIED' });
    expect(requests).toBe(0);
  });

  it('refuses a worker that would preload code before its guard', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'] });
    const preload = join(await harness.tempDir(), 'preload.cjs');
    await writeFile(preload, `require('node:http').get(${JSON.stringify(url)}).on('error', () => undefined);\n`);
    const error = await caught(kernel.pipeline.call({ target: 'leak_worker_quiet', input: { url, preload }, principal: admin }));
    expect(error.code).toBe('EGRESS_DENIED');
    // The refusal came before the worker existed: a request the preload sent would have arrived first.
    expect(await value(kernel, 'leak_worker_declared', { url })).toEqual({ status: 200 });
    expect(requests).toBe(1);
  });

  it('refuses the network to a worker a plugin started outside any action, whichever action asks it', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'], config: { plugins: { leaky: { config: { keepWorker: true } } } } });
    expect(await value(kernel, 'leak_worker_kept_quiet', { url })).toEqual({ error: 'EGRESS_DENIED' });
    expect(await value(kernel, 'leak_worker_kept_declared', { url })).toEqual({ error: 'EGRESS_DENIED' });
    expect(requests).toBe(0);
  });

  it('refuses a message to a worker a trusted plugin\'s action with dataEgress started and kept, from an action without it', async () => {
    const urlInput = { type: 'object', required: ['url'], properties: { url: { type: 'string' } } };
    const keeper: UserPlugin = {
      manifest: {
        id: 'keeper', version: '0.1.0', kernel: '^0.1.0', description: 'keeps a worker', entry: 'main.js',
        tools: [{ name: 'kept', description: 'a kept worker', actions: {
          start: { description: 'starts a worker that fetches each URL it is sent', input: { type: 'object' }, effects: ['dataEgress'] },
          ask_quiet: { description: 'asks it, not declared', input: urlInput, effects: [] },
          ask_declared: { description: 'asks it, declared', input: urlInput, effects: ['dataEgress'] },
        } }],
      },
      entry: 'main.js',
      code: `import { Worker } from 'node:worker_threads';
const FETCH_ON_MESSAGE = "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (url) => fetch(url).then((r) => parentPort.postMessage({ status: r.status }), (e) => parentPort.postMessage({ error: String(e) })));";
export default { activate(ctx) {
  let worker;
  ctx.onDispose(() => worker?.terminate());
  const ask = (input) => new Promise((resolve) => { worker.once('message', resolve); worker.postMessage(input.url); });
  return { kept: {
    start: () => { worker = new Worker(FETCH_ON_MESSAGE, { eval: true }); return { started: true }; },
    ask_quiet: ask,
    ask_declared: ask,
  } };
} };
`,
    };
    const kernel = await harness.boot({ userPlugins: { keeper }, config: { plugins: { keeper: { trusted: true } } } });
    expect(await value(kernel, 'kept_start', {})).toEqual({ started: true });
    expect((await caught(value(kernel, 'kept_ask_quiet', { url }))).code).toBe('EGRESS_DENIED');
    expect(requests).toBe(0);
    expect(await value(kernel, 'kept_ask_declared', { url })).toEqual({ status: 200 });
    expect(requests).toBe(1);
  });

  it('lets a worker started by an action that declares dataEgress reach the network', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'] });
    expect(await value(kernel, 'leak_worker_declared', { url })).toEqual({ status: 200 });
    expect(requests).toBe(1);
  });
});

describe('egress guard: sockets opened outside the action that writes', () => {
  const harness = useHarness();
  let sink: NetServer;
  let port: number;
  let received: string;
  const open: Socket[] = [];

  beforeEach(async () => {
    received = '';
    sink = createNetServer((socket) => {
      open.push(socket);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => { received += chunk; });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    port = (sink.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const socket of open.splice(0)) socket.destroy();
    await new Promise((resolve) => sink.close(resolve));
  });

  /** Bytes sent before END arrive before it (one TCP stream): once END is in, nothing refused can still come. */
  async function receivedUntilEnd(kernel: Kernel, target = 'leak_write_declared'): Promise<string> {
    expect(await value(kernel, target, { text: 'END' })).toEqual({ written: true });
    await expect.poll(() => received.endsWith('END')).toBe(true);
    return received;
  }

  it.each(['leak_write_quiet', 'leak_end_quiet'])('refuses data written by %s, which does not declare dataEgress, to a socket opened in activate', async (target) => {
    const kernel = await harness.boot({ plugins: ['leaky'], config: { plugins: { leaky: { config: { sinkPort: port } } } } });
    expect((await caught(kernel.pipeline.call({ target, input: { text: 'SECRET' }, principal: admin }))).code).toBe('EGRESS_DENIED');
    expect(await receivedUntilEnd(kernel)).toBe('END');
    expect((await auditLines(kernel)).filter((line) => line.outcome === 'egress_denied').map((line) => line.details?.target)).toEqual([`tcp://127.0.0.1:${port}`]);
  });

  it('refuses data written by an action without dataEgress to a socket another action opened and kept', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'], config: { plugins: { leaky: { config: { sinkPort: port } } } } });
    expect(await value(kernel, 'leak_open_declared', {})).toEqual({ opened: true });
    expect((await caught(kernel.pipeline.call({ target: 'leak_write_kept_quiet', input: { text: 'SECRET' }, principal: admin }))).code).toBe('EGRESS_DENIED');
    expect(await receivedUntilEnd(kernel)).toBe('END');
  });

  it('leaves the kernel\'s own sockets alone inside an action (its HTTP answers, its log)', async () => {
    const kernel = await harness.boot({ plugins: ['leaky'], config: { plugins: { leaky: { config: { sinkPort: port } } } } });
    expect(await receivedUntilEnd(kernel)).toBe('END');
  });
});
