import { request, type IncomingMessage } from 'node:http';
import { KernelError, type ErrorCode } from '../../errors.js';

/** One server-sent event: its name and its JSON data. */
export interface ServerEvent {
  event: string;
  data: unknown;
}

/**
 * A small client of a serving kernel's HTTP API, as an administrator. Plain node:http rather than
 * fetch: a turn's event stream may stay silent for as long as a confirmation waits (ten minutes by
 * default), past fetch's body timeout.
 */
export class KernelClient {
  constructor(readonly url: string, private readonly token: string) {}

  /**
   * Whether the last request could not reach the kernel (`before`: it was not sent), or lost it mid-answer
   * (`during`: it was taken, and may have acted): the kernel may have stopped. Undefined once one answers.
   */
  lostContact: 'before' | 'during' | undefined;

  /** A JSON request; an error answer is thrown as the kernel's own error (code and message). */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    const text = await this.readAll(response);
    if ((response.statusCode ?? 500) >= 400) throw errorOf(response.statusCode ?? 500, text);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /**
   * Posts, then reads the answer as server-sent events, handing each to `onEvent`; the stream is not
   * read on while `onEvent` runs, so events are handled in order. Resolves when the server ends it.
   */
  async events(path: string, body: unknown, onEvent: (event: ServerEvent) => Promise<void>): Promise<void> {
    const response = await this.send('POST', path, body);
    if ((response.statusCode ?? 500) >= 400 || !String(response.headers['content-type']).startsWith('text/event-stream')) {
      throw errorOf(response.statusCode ?? 500, await this.readAll(response));
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let handling = false;
    try {
      for await (const chunk of response) {
        buffer += decoder.decode(chunk as Buffer, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const event = parseEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          handling = true;
          if (event) await onEvent(event);
          handling = false;
        }
      }
    } catch (error) {
      // The handler's own failure is its caller's to report; a broken stream is a lost connection.
      if (handling) throw error;
      throw this.lost(error);
    }
    if (!response.complete) throw this.lost(undefined);
  }

  private lost(cause: unknown): KernelError {
    this.lostContact = 'during';
    return new KernelError('INTERNAL', `the connection to the kernel at ${this.url} was lost`, { details: { unreachable: true }, ...(cause === undefined ? {} : { cause }) });
  }

  private send(method: string, path: string, body: unknown): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const outgoing = request(new URL(path, this.url), {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
        },
      }, (response) => {
        this.lostContact = undefined;
        resolve(response);
      });
      outgoing.on('error', (error) => {
        this.lostContact = 'before';
        reject(new KernelError('INTERNAL', `the kernel at ${this.url} does not answer (${error.message})`, { details: { unreachable: true }, cause: error }));
      });
      outgoing.end(payload);
    });
  }

  private async readAll(response: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of response) chunks.push(chunk as Buffer);
    } catch (error) {
      throw this.lost(error);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

function parseEvent(block: string): ServerEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length === 0 ? undefined : { event, data: JSON.parse(data.join('\n')) as unknown };
}

/** The kernel's `{ error: { code, message, details } }`, rebuilt as the error it was. */
function errorOf(status: number, text: string): KernelError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    if (typeof body.error?.code === 'string' && typeof body.error.message === 'string') {
      // The server's codes are the kernel's own: the same union.
      return new KernelError(body.error.code as ErrorCode, body.error.message, { details: (body.error.details ?? {}) as Record<string, unknown> });
    }
  } catch { /* not the kernel's error shape */ }
  return new KernelError('INTERNAL', `the kernel answered HTTP ${status}: ${text.slice(0, 200)}`);
}
