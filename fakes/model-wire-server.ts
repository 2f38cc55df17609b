import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received: what the real SDK put on the wire. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Resolves when the client closed the connection before the reply ended (a cancellation). */
  closedEarly: Promise<boolean>;
  /** When the reply's last byte was handed to the socket (process.hrtime). */
  finishedAt?: bigint;
}

/** One reply to one generation request. */
export type Reply =
  | { kind: 'sse'; frames: string[]; stallAfter?: number; frameDelayMs?: number }
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> };

/**
 * A loopback server that answers model requests from a script, one reply per POST, and keeps every
 * request. GETs (the model check) are answered from `models`. Frames are written as given, so each
 * protocol's framing is the test's to get right.
 */
export class ModelWireServer {
  readonly received: Received[] = [];
  private readonly replies: Reply[] = [];
  private server: Server | undefined;
  models: string[] = [];
  url = '';

  static async start(models: string[]): Promise<ModelWireServer> {
    const fake = new ModelWireServer();
    fake.models = models;
    fake.server = createServer((request, response) => void fake.handle(request, response));
    await new Promise<void>((resolve) => fake.server!.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** Answers a POST when no reply is queued: the test decides from the request (a summary request, or a round). */
  responder: ((body: Record<string, unknown>) => Reply) | undefined;

  /** Queues replies for the next POSTs, in order. */
  reply(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  get posts(): Received[] {
    return this.received.filter((request) => request.method === 'POST');
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let finished = false;
    const closedEarly = new Promise<boolean>((resolve) => {
      response.on('close', () => resolve(!finished));
    });
    const path = request.url ?? '/';
    const received: Received = { method: request.method ?? 'GET', path, headers: request.headers, body: text === '' ? {} : JSON.parse(text) as Record<string, unknown>, closedEarly };
    this.received.push(received);
    if (request.method === 'GET') {
      finished = true;
      this.answerModels(path, response);
      return;
    }
    const reply = this.replies.shift() ?? this.responder?.(received.body);
    if (!reply) {
      finished = true;
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `the fake has no reply for request ${this.posts.length}` } }));
      return;
    }
    if (reply.kind === 'json') {
      finished = true;
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Sent at once, as a streaming server does: a stall after them is a server that took the request.
    response.flushHeaders();
    for (const [index, frame] of reply.frames.entries()) {
      if (reply.stallAfter !== undefined && index >= reply.stallAfter) return; // headers sent, then silence
      if (response.destroyed) return;
      response.write(frame);
      if (reply.frameDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.frameDelayMs));
    }
    finished = true;
    response.end(() => { received.finishedAt = process.hrtime.bigint(); });
  }

  /** OpenAI lists (`/v1/models`), Anthropic and Gemini look one up (`…/models/<id>`). */
  private answerModels(path: string, response: ServerResponse): void {
    const bare = path.split('?')[0]!;
    if (/\/models$/.test(bare)) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: this.models.map((id) => ({ id, object: 'model', created: 1760000000, owned_by: 'fake' })) }));
      return;
    }
    const id = decodeURIComponent(bare.slice(bare.lastIndexOf('/') + 1));
    if (!this.models.includes(id)) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', code: 404, message: `model ${id} not found`, status: 'NOT_FOUND' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'model', id, name: `models/${id}`, display_name: id, created_at: '2026-01-01T00:00:00Z' }));
  }
}
