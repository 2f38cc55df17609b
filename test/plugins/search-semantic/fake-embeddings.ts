import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DIMENSIONS = 64;

/**
 * Deterministic vectors from character trigrams (hashed into DIMENSIONS buckets, unit length): texts
 * that share more trigrams are nearer, so a test can say which block is nearest to a query. The same
 * function as source text, so a user plugin (a local embedder) can compute the same vectors.
 */
export const NGRAM_SOURCE = `function ngramVector(text, dimensions) {
  const out = new Float32Array(dimensions);
  const padded = '  ' + text.toLowerCase() + '  ';
  for (let i = 0; i + 3 <= padded.length; i++) {
    let h = 2166136261;
    for (let j = i; j < i + 3; j++) { h ^= padded.charCodeAt(j); h = Math.imul(h, 16777619) >>> 0; }
    out[h % dimensions] += 1;
  }
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dimensions; i++) out[i] /= norm;
  return out;
}`;

// eslint-disable-next-line @typescript-eslint/no-implied-eval
export const ngramVector = new Function(`${NGRAM_SOURCE}; return ngramVector;`)() as (text: string, dimensions: number) => Float32Array;

/**
 * A loopback server speaking OpenAI's POST /v1/embeddings (what the providers plugin's embedder calls):
 * it records every text it receives, and can be told to fail.
 */
export class FakeEmbeddings {
  /** Every text received, in order. */
  readonly texts: string[] = [];
  /** Every request's input, in order. */
  readonly requests: string[][] = [];
  /** While positive, each request fails with HTTP 500 and this counts down. */
  failNext = 0;
  /** While true, every request fails with HTTP 500. */
  down = false;
  /** When it returns true for a request's input, that request is never answered (a slow embedder); closing the fake ends it. */
  holdIf: ((input: readonly string[]) => boolean) | undefined;
  /** When it returns true for a request's input, that request fails with HTTP 500. */
  failIf: ((input: readonly string[]) => boolean) | undefined;
  /** Awaited before a request is answered: what a person does while the embedder works. */
  beforeAnswer: ((input: readonly string[]) => Promise<void>) | undefined;
  /** When it returns true for a text, a request holding it is refused with HTTP 400 (too long for the model). */
  rejectText: ((text: string) => boolean) | undefined;
  /** While true, every request is refused with HTTP 404: the model does not exist (a misspelt name). */
  noSuchModel = false;
  /** While true, every request is refused with HTTP 401, the body echoing the key sent (as some proxies do). */
  refuseKey = false;
  /** When it returns true for a request's input, the answer's headers and half its body are sent, then nothing. */
  stallIf: ((input: readonly string[]) => boolean) | undefined;
  /** Answers that are not whole: every vector at index 0, or a value that is not a number; or vectors of zeros. */
  corrupt: 'duplicate-index' | 'not-a-number' | 'no-index' | 'zeros' | undefined;
  /** The model the answers name (default: the one asked for). */
  servedModel: string | undefined;
  /** The size of the vectors answered when the request names none (default DIMENSIONS): a model swapped behind its name. */
  servedDimensions: number | undefined;
  private server: Server | undefined;
  url = '';

  static async start(): Promise<FakeEmbeddings> {
    const fake = new FakeEmbeddings();
    fake.server = createServer((request, response) => void fake.handle(request, response));
    await new Promise<void>((resolve) => fake.server!.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}/v1`;
    return fake;
  }

  received(fragment: string): boolean {
    return this.texts.some((text) => text.includes(fragment));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || !(request.url ?? '').endsWith('/embeddings')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string | string[]; dimensions?: number };
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    this.requests.push(input);
    this.texts.push(...input);
    if (this.holdIf?.(input) === true) return;
    await this.beforeAnswer?.(input);
    if (input.some((text) => this.rejectText?.(text) === true)) {
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens, however you requested 9000 tokens", type: 'invalid_request_error' } }));
      return;
    }
    if (this.noSuchModel) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `The model \`${body.model}\` does not exist`, type: 'invalid_request_error' } }));
      return;
    }
    if (this.refuseKey) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Authentication Error, invalid key ${request.headers.authorization ?? ''}`, type: 'auth_error' } }));
      return;
    }
    if (this.stallIf?.(input) === true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"object":"list","data":[');
      return;
    }
    if (this.down || this.failNext > 0 || this.failIf?.(input) === true) {
      if (this.failNext > 0) this.failNext--;
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the fake embedder is down', type: 'server_error' } }));
      return;
    }
    const dimensions = body.dimensions ?? this.servedDimensions ?? DIMENSIONS;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      object: 'list', model: this.servedModel ?? body.model, usage: { prompt_tokens: input.length, total_tokens: input.length },
      data: input.map((text, index) => ({
        object: 'embedding', ...(this.corrupt === 'no-index' ? {} : { index: this.corrupt === 'duplicate-index' ? 0 : index }),
        embedding: this.corrupt === 'not-a-number' ? [...Array.from(ngramVector(text, dimensions)).slice(1), 'NaN']
          : this.corrupt === 'zeros' ? new Array<number>(dimensions).fill(0) : Array.from(ngramVector(text, dimensions)),
      })),
    }));
  }
}
