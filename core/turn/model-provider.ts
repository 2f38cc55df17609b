/**
 * The one interface the turn loop talks to models through (DESIGN.md §6). Providers normalise their
 * stream into these events; provider-native state (signed reasoning, thought signatures) travels in
 * `providerData`, opaque to the loop, and is sent back on the next request.
 */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
}

export interface ModelMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: { id: string; name: string; arguments: string; providerData?: unknown }[];
  toolCallId?: string;
  providerData?: unknown;
  /**
   * A tool result's notebooks: whose notes' content it holds (unknown = every notebook); an assistant
   * message's: whose notes its model had been shown when it wrote it (none recorded = none). The
   * kernel's own; never sent: the turn withholds such a message from a model off this machine when one
   * of them is local-only (egress-filter.ts).
   */
  notebooks?: readonly string[] | 'all';
  /** The person let this result go to the model although it holds local-only notes (a release confirmation). */
  released?: boolean;
}

export interface ModelRequest {
  messages: readonly ModelMessage[];
  /** Empty when the model must answer without tools (the round bound was reached). */
  tools: readonly ModelToolSpec[];
  maxOutputTokens?: number;
  temperature?: number;
}

export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsDelta: string }
  | { type: 'tool_call_end'; index: number; providerData?: unknown }
  | { type: 'usage'; promptTokens: number; completionTokens: number; cachedTokens?: number; reasoningTokens?: number }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other'; providerData?: unknown }
  /** The server is still working (a ping, hidden reasoning, an item starting): resets the idle watchdog only. */
  | { type: 'keepalive' };

export interface ModelProvider {
  readonly id: string;
  /**
   * Its entry in the providing plugin's manifest (`providers`), whose effects the kernel applies;
   * defaults to `id`. A server on this machine may be a `local` entry that declares no effects.
   */
  readonly entry?: string;
  /** The model it talks to, when it knows: a compaction summary is reused only for the same one. */
  readonly model?: string;
  /**
   * Set when the configured model cannot be used at all (its key's variable unset, a bad local address):
   * `quire serve` says it at start, with where in quire.json (it was a JSON log line only, and the first
   * turn's 503 the first place a person saw it).
   */
  readonly unavailable?: { message: string; field?: string };
  /** The model's window and answer size, when its configuration gives them (quire.json's agent section wins). */
  readonly limits?: { contextLimit?: number; maxOutputTokens?: number };
  /**
   * Called before a turn opens its stream: throws a clear error (missing key, unknown model) instead of
   * letting the first request fail. May ask the server once; the answer is remembered.
   */
  prepare?(signal: AbortSignal): Promise<void>;
  /**
   * Runs before each request, outside the stream's idle watchdog: what may take the person's time (a
   * budget question) happens here. Throws a ModelError to stop the request unsent.
   */
  beforeRequest?(request: ModelRequest, signal: AbortSignal): Promise<void>;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

/**
 * A provider that is `provider` with some of its calls taken over (`overrides`): the rest delegates,
 * never copying the provider's state (it keeps what it learned, such as a model check).
 */
export function wrapProvider(provider: ModelProvider, overrides: Pick<ModelProvider, 'stream'> & Partial<Pick<ModelProvider, 'beforeRequest'>>): ModelProvider {
  return {
    id: provider.id,
    ...(provider.entry !== undefined ? { entry: provider.entry } : {}),
    ...(provider.model !== undefined ? { model: provider.model } : {}),
    ...(provider.limits !== undefined ? { limits: provider.limits } : {}),
    ...(provider.prepare ? { prepare: (signal: AbortSignal) => provider.prepare!(signal) } : {}),
    ...(provider.beforeRequest ? { beforeRequest: (request: ModelRequest, signal: AbortSignal) => provider.beforeRequest!(request, signal) } : {}),
    ...overrides,
  };
}

/** How a model request failed, which decides whether it is tried again (REFERENCE.md §5, step 6). */
export type ModelErrorCategory = 'rate_limit' | 'server' | 'timeout' | 'network' | 'context_overflow' | 'authentication' | 'invalid_request'
  /** Not sent: it would pass a budget of quire.json (reported as BUDGET_EXCEEDED). */
  | 'budget_exceeded';

/** The one error providers throw: their SDKs' errors are mapped to a category once, in the provider. */
export class ModelError extends Error {
  constructor(readonly category: ModelErrorCategory, message: string, readonly retryAfterMs?: number) {
    super(message);
    this.name = 'ModelError';
  }
}
