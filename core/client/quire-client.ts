import { OPERATIONS, type Operations } from './api-schema.js';

export type { Operations } from './api-schema.js';
export type OperationId = keyof Operations;

/** The operations that are actions (`POST /api/actions/...`): their result is `{ result }` or a job. */
export type ActionId = { [K in OperationId]: (typeof OPERATIONS)[K]['path'] extends `/api/actions/${string}/${string}/${string}` ? K : never }[OperationId];

type ParamsOf<O> = O extends { params: infer P } ? { params: P } : { params?: undefined };
type QueryOf<O> = O extends { query: infer Q } ? { query?: Q } : { query?: undefined };
type BodyOf<O> = O extends { body: infer B } ? { body: B } : { body?: undefined };

/** What a call takes: the operation's path parameters, query and body, as the document types them. */
export type RequestOf<K extends OperationId> = ParamsOf<Operations[K]> & QueryOf<Operations[K]> & BodyOf<Operations[K]> & {
  headers?: Record<string, string>;
  signal?: AbortSignal;
};
export type ResponseOf<K extends OperationId> = Operations[K]['response'];

export interface QuireClientOptions {
  /** `http://127.0.0.1:4410`; '' for the page's own origin (the web app). */
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
}

/** An error answer of the kernel: `{ error: { code, message, details } }` with its status. */
export class QuireApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: Record<string, unknown>) {
    super(message);
    this.name = 'QuireApiError';
  }
}

export interface QuireClient {
  /** The raw response (an event stream, a page, or to read headers). */
  request<K extends OperationId>(id: K, ...args: OptionalIfEmpty<RequestOf<K>>): Promise<Response>;
  /** The JSON answer; an error answer is thrown as QuireApiError. */
  call<K extends OperationId>(id: K, ...args: OptionalIfEmpty<RequestOf<K>>): Promise<ResponseOf<K>>;
  /** An action's result (`Prefer: wait` for a long one, so that its result comes back too). */
  action<K extends ActionId>(id: K, input: Operations[K] extends { body: infer B } ? B : never, options?: { waitSeconds?: number; signal?: AbortSignal }): Promise<unknown>;
}

type OptionalIfEmpty<T> = Record<string, never> extends Omit<T, 'headers' | 'signal'> ? [request?: T] : [request: T];

/** A typed client of the kernel's HTTP API, driven by the generated operation table (api-schema.ts). */
export function createQuireClient(options: QuireClientOptions): QuireClient {
  const send = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/$/, '');
  const request = (id: OperationId, args: { params?: Record<string, string>; query?: object; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> => {
    const operation = OPERATIONS[id];
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = args.params?.[name];
      if (value === undefined) throw new TypeError(`${id}: the path parameter '${name}' is missing`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(args.query ?? {})) if (value !== undefined) search.set(name, String(value));
    const headers: Record<string, string> = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...args.headers };
    if (args.body !== undefined) headers['content-type'] = 'application/json';
    return send(`${base}${path}${search.size > 0 ? `?${search}` : ''}`, {
      method: operation.method, headers,
      ...(args.body !== undefined ? { body: JSON.stringify(args.body) } : {}),
      ...(args.signal ? { signal: args.signal } : {}),
    });
  };
  const call = async (id: OperationId, args?: object): Promise<unknown> => {
    const response = await request(id, args);
    return readAnswer(response);
  };
  return {
    request: request as QuireClient['request'],
    call: call as QuireClient['call'],
    async action(id, input, actionOptions = {}) {
      const response = await request(id, {
        body: input,
        ...(actionOptions.waitSeconds ? { headers: { prefer: `wait=${actionOptions.waitSeconds}` } } : {}),
        ...(actionOptions.signal ? { signal: actionOptions.signal } : {}),
      });
      const answer = await readAnswer(response) as { result?: unknown; job?: unknown };
      return response.status === 202 ? answer : answer.result;
    },
  };
}

async function readAnswer(response: Response): Promise<unknown> {
  const text = await response.text();
  const body: unknown = text === '' ? undefined : parseJson(text, response.status);
  if (response.ok) return body;
  const error = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)?.error;
  throw new QuireApiError(response.status, error?.code ?? 'HTTP_ERROR', error?.message ?? `HTTP ${response.status}`, error?.details ?? {});
}

function parseJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new QuireApiError(status, 'INVALID_JSON', `the kernel answered something that is not JSON (HTTP ${status})`, {});
  }
}
