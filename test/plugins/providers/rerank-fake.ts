import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RerankShape = 'cohere' | 'jina' | 'voyage' | 'tei';

/** What the fake does with the next request: score honestly, or misbehave in one way. */
export type RerankBehaviour = 'score' | 'one-short' | 'duplicate-index' | 'index-out-of-range' | 'not-json' | 'http-500' | 'hang' | 'wrong-shape' | 'http-401-echo' | 'http-400-echo' | 'http-400-echo-late' | 'not-json-echo' | 'huge';

export interface RerankRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/**
 * A loopback `/rerank` server speaking one vendor's dialect (the request and answer of
 * rerank-shapes.ts). It scores a document by how many of the query's words it holds (ties: shorter
 * first), answers best first as the vendors do, and keeps every request.
 */
export class RerankFake {
  readonly requests: RerankRequest[] = [];
  /** Behaviours for the next requests, in order; 'score' once they run out. */
  readonly script: RerankBehaviour[] = [];
  url = '';
  private server: Server | undefined;

  private constructor(readonly shape: RerankShape) {}

  static async start(shape: RerankShape): Promise<RerankFake> {
    const fake = new RerankFake(shape);
    fake.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        fake.requests.push({ path: request.url ?? '/', headers: request.headers, body });
        const behaviour = fake.script.shift() ?? 'score';
        if (behaviour === 'hang') return;
        // Some proxies quote the key they were sent in their answer.
        if (behaviour === 'http-401-echo') return void response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `invalid key ${request.headers.authorization ?? ''}` }));
        // The key where a message cut at 300 characters (and 100 for one that is no JSON) would cut it.
        if (behaviour === 'http-400-echo-late') return void response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `${'x'.repeat(270)} ${request.headers.authorization ?? ''}` }));
        if (behaviour === 'not-json-echo') return void response.writeHead(200, { 'content-type': 'text/html' }).end(`<html>${'y'.repeat(75)} ${request.headers.authorization ?? ''}</html>`);
        if (behaviour === 'http-400-echo') return void response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `bad request from ${request.headers.authorization ?? ''}` }));
        // Ten megabytes, in chunks, no length announced.
        if (behaviour === 'huge') {
          response.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(1024 * 1024, 0x20);
          let sent = 0;
          const more = (): void => {
            while (sent < 10 && response.write(chunk)) sent++;
            if (sent >= 10) response.end();
            else response.once('drain', () => { sent++; more(); });
          };
          response.on('error', () => undefined);
          more();
          return;
        }
        if (behaviour === 'http-500') return void response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"internal error"}');
        if (behaviour === 'not-json') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>gateway</html>');
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fake.answer(body, behaviour)));
      });
    });
    await new Promise<void>((resolve) => fake.server!.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The path each dialect posts to. */
  get path(): string {
    return { cohere: '/v2/rerank', jina: '/v1/rerank', voyage: '/v1/rerank', tei: '/rerank' }[this.shape];
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private answer(body: Record<string, unknown>, behaviour: RerankBehaviour): unknown {
    const query = String(body.query ?? '');
    const documents = ((this.shape === 'tei' ? body.texts : body.documents) ?? []) as string[];
    let ranked = documents.map((text, index) => ({ index, score: score(query, text) })).sort((a, b) => b.score - a.score || a.index - b.index);
    if (behaviour === 'one-short') ranked = ranked.slice(1);
    if (behaviour === 'duplicate-index' && ranked.length > 1) ranked[1] = { ...ranked[1]!, index: ranked[0]!.index };
    if (behaviour === 'index-out-of-range') ranked[0] = { ...ranked[0]!, index: documents.length };
    if (behaviour === 'wrong-shape') return { ranking: ranked };
    switch (this.shape) {
      case 'cohere': return { id: 'r-1', results: ranked.map(({ index, score: value }) => ({ index, relevance_score: value })), meta: { billed_units: { search_units: 1 } } };
      case 'jina': return { model: body.model, usage: { total_tokens: 10 }, results: ranked.map(({ index, score: value }) => ({ index, relevance_score: value })) };
      case 'voyage': return { object: 'list', data: ranked.map(({ index, score: value }) => ({ relevance_score: value, index })), model: body.model, usage: { total_tokens: 10 } };
      case 'tei': return ranked.map(({ index, score: value }) => ({ index, score: value }));
    }
  }
}

/** Words of the query found in the text, as a fraction; shorter texts win ties by a hair. */
export function score(query: string, text: string): number {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const lower = text.toLowerCase();
  const found = words.filter((word) => lower.includes(word)).length;
  return found / Math.max(1, words.length) + 1 / (1000 + text.length);
}
