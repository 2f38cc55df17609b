import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** A request as the route read it: the JSON-RPC body and the headers the transport would check. */
export interface SessionRequest {
  body: unknown;
  accept: string | undefined;
  protocolVersion: string | undefined;
}

/**
 * What one session's MCP server talks through: the SDK's Streamable HTTP transport, which answers with
 * an event stream so that a call's progress notifications reach the client on its own stream, and,
 * beside it, a plain JSON answer for a `tools/call` that cannot have any (no progress token, not a long
 * action). Such a call is most calls, and the event stream cost more than the call: a stream per request
 * on both sides, parsed event by event. Both are answers Streamable HTTP allows for a POST; the server
 * (validation, cancellation by `notifications/cancelled`, the handlers) is the same either way.
 */
export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Requests answered as JSON, by id: where their response goes. */
  private readonly direct = new Map<RequestId, (response: JSONRPCMessage) => void>();
  /** Requests answered already (cancelled, or their client gone): the server's late response goes nowhere. */
  private readonly ended = new Set<RequestId>();

  constructor(readonly http: WebStandardStreamableHTTPServerTransport) {
    http.onclose = () => {
      this.closePending();
      this.onclose?.();
    };
    http.onerror = (error) => this.onerror?.(error);
    http.onmessage = (message, extra) => {
      this.forgetEnded(message);
      const invalid = invalidToolCall(message);
      if (invalid) {
        this.http.send(invalid, { relatedRequestId: invalid.id }).catch(() => undefined);
        return;
      }
      this.onmessage?.(message, extra);
      const cancelled = cancelledRequest(message);
      // After the server has seen it (its handler's signal aborts in a microtask): see endCancelled.
      if (cancelled !== undefined) setImmediate(() => this.endCancelled(cancelled));
    };
  }

  /**
   * A request its client cancelled gets no response from the server (the SDK sends none), so its HTTP
   * answer, a JSON answer waiting or an event stream kept open, never ended, and the session counted it
   * in use for ever (never swept; 64 of them and no session could open). It ends with a JSON-RPC error
   * saying so. A request already answered is left alone.
   */
  private endCancelled(id: RequestId): void {
    const error = { jsonrpc: '2.0', id, error: { code: REQUEST_CANCELLED, message: 'Request cancelled' } } as JSONRPCMessage;
    const waiting = this.direct.get(id);
    if (waiting) {
      // The server sends nothing for a cancelled request: no late response to wait for (unlike a client gone).
      this.direct.delete(id);
      waiting(error);
      return;
    }
    // The event-stream transport closes the request's stream once it has its response; an unknown id throws.
    this.http.send(error).catch(() => undefined);
  }

  get sessionId(): string | undefined {
    return this.http.sessionId;
  }

  start(): Promise<void> {
    return this.http.start();
  }

  close(): Promise<void> {
    return this.http.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.ended.size > 0 && isResponse(message) && this.ended.delete((message as { id: RequestId }).id)) return Promise.resolve();
    if (this.direct.size > 0) {
      const response = isResponse(message);
      const id = response ? (message as { id: RequestId }).id : options?.relatedRequestId;
      const answer = id === undefined ? undefined : this.direct.get(id);
      if (answer) {
        if (response) {
          this.direct.delete(id!);
          answer(message);
        }
        // A notification about a request answered as JSON has nowhere to go (the SDK's JSON mode drops it too).
        return Promise.resolve();
      }
    }
    return this.http.send(message, options);
  }

  /**
   * The JSON answer to a request that can have one: a single `tools/call` without a progress token, of
   * a tool that is not long, from a client that accepts both kinds of answer and speaks a protocol
   * version we know. Undefined for anything else, which the event-stream transport answers as before.
   */
  answerAsJson(request: SessionRequest, isLong: (tool: string) => boolean, signal?: AbortSignal): Promise<Response> | undefined {
    const message = request.body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; _meta?: { progressToken?: unknown } } } | undefined;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
    if (message.jsonrpc !== '2.0' || message.method !== 'tools/call' || (typeof message.id !== 'string' && typeof message.id !== 'number')) return undefined;
    const params = message.params;
    if (typeof params !== 'object' || params === null || typeof params.name !== 'string' || params._meta?.progressToken !== undefined) return undefined;
    if (!request.accept?.includes('application/json') || !request.accept.includes('text/event-stream')) return undefined;
    if (request.protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(request.protocolVersion)) return undefined;
    const id = message.id;
    if (this.direct.has(id) || isLong(params.name)) return undefined;
    return new Promise<JSONRPCMessage>((resolve) => {
      this.direct.set(id, resolve);
      // The client went away: nobody reads the answer, and the session is not held for it.
      signal?.addEventListener('abort', () => {
        if (this.direct.get(id) !== resolve) return;
        this.direct.delete(id);
        this.ended.add(id);
        resolve({ jsonrpc: '2.0', id, error: { code: REQUEST_CANCELLED, message: 'The client closed the request' } } as JSONRPCMessage);
      }, { once: true });
      this.forgetEnded(message as JSONRPCMessage);
      const invalid = invalidToolCall(message as JSONRPCMessage);
      if (invalid) {
        this.direct.delete(id);
        resolve(invalid);
        return;
      }
      this.onmessage?.(message as JSONRPCMessage);
    }).then((response) => {
      const answer = new Response(JSON.stringify(response), { status: 200, headers: { 'content-type': 'application/json', 'mcp-session-id': this.sessionId ?? '' } });
      jsonAnswers.add(answer);
      return answer;
    });
  }

  /**
   * A new request with the id of one that ended: that id is this request's now. A cancelled request's id
   * stayed among the ended (the server never answers it), and the next request with it had its answer
   * dropped as that one's late response: it never got one.
   */
  private forgetEnded(message: JSONRPCMessage): void {
    if (this.ended.size === 0) return;
    const { id, method } = message as { id?: RequestId; method?: unknown };
    if (id !== undefined && typeof method === 'string') this.ended.delete(id);
  }

  /** The session closed under requests answered as JSON: they answer that, as a JSON-RPC error. */
  private closePending(): void {
    for (const [id, answer] of this.direct) answer({ jsonrpc: '2.0', id, error: { code: -32001, message: 'Session closed' } } as JSONRPCMessage);
    this.direct.clear();
  }
}

/** Answers made by answerAsJson: whole, so their headers need not be read (which would build the Response in full). */
const jsonAnswers = new WeakSet<Response>();

export function isJsonAnswer(response: Response): boolean {
  return jsonAnswers.has(response);
}

/** JSON-RPC's code for a request cancelled (as LSP has it; MCP names none). */
const REQUEST_CANCELLED = -32800;

/** The request id a `notifications/cancelled` names, if the message is one. */
function cancelledRequest(message: JSONRPCMessage): RequestId | undefined {
  const notification = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
  if (notification.method !== 'notifications/cancelled' || notification.id !== undefined) return undefined;
  const id = notification.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

function isResponse(message: JSONRPCMessage): boolean {
  return !('method' in message) && 'id' in message && ('result' in message || 'error' in message);
}

/**
 * A `tools/call` whose params do not fit the protocol's schema, as the JSON-RPC error it is: -32602
 * naming the field. The SDK checks it before any handler and answered -32603 with its validator's
 * whole dump as the message.
 */
/**
 * The requests whose params the SDK checks against these before our handlers run: a mismatch there
 * is answered -32603 with the validator's whole dump; here it is -32602 naming the field.
 */
type ParamsCheck = (value: unknown) => { success: true } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
const PARAMS_CHECKED: ReadonlyMap<string, ParamsCheck> = new Map<string, ParamsCheck>([
  ['tools/call', (value) => CallToolRequestSchema.safeParse(value)], ['resources/read', (value) => ReadResourceRequestSchema.safeParse(value)],
  ['resources/subscribe', (value) => SubscribeRequestSchema.safeParse(value)], ['resources/unsubscribe', (value) => UnsubscribeRequestSchema.safeParse(value)],
  ['prompts/get', (value) => GetPromptRequestSchema.safeParse(value)],
]);

function invalidToolCall(message: JSONRPCMessage): (JSONRPCMessage & { id: RequestId }) | undefined {
  const { id, method } = message as { id?: RequestId; method?: unknown };
  const check = typeof method === 'string' ? PARAMS_CHECKED.get(method) : undefined;
  if (!check || id === undefined) return undefined;
  const checked = check(message);
  if (checked.success) return undefined;
  const issue = checked.error.issues[0];
  const where = issue?.path.map(String).join('.') || 'params';
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${where}: ${issue?.message ?? `does not fit ${String(method)}`}` } } as JSONRPCMessage & { id: RequestId };
}
