import { ModelError, type ModelErrorCategory } from '../../core/turn/model-provider.js';

/** Words servers use when a request does not fit the model's context (OpenAI, Anthropic, Gemini, local servers). */
const OVERFLOW = /context.length|context window|maximum context|prompt is too long|too many tokens|exceeds the maximum number of tokens|input token count|context_length_exceeded|exceed context limit/i;
/** A key refused with a 400 (Gemini: API_KEY_INVALID) is still a key problem, not a bad request. */
const BAD_KEY = /API_KEY_INVALID|API key not valid|invalid api key|invalid x-api-key|incorrect api key/i;
/** A 429 that waiting will not clear: the account is out of quota or over its spending limit. */
const OUT_OF_QUOTA = /insufficient_quota|enforced_spend_limit|spend(ing)? limit reached/i;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

interface SdkErrorShape {
  name?: string;
  message?: string;
  status?: unknown;
  headers?: { get(name: string): string | null } | undefined;
  cause?: unknown;
  code?: unknown;
  error?: unknown;
}

/**
 * The one place an SDK's error becomes a `ModelError` category, which the turn loop's retry and
 * compaction rules read. The three SDKs differ in classes but agree on `status` and `headers`.
 */
export function toModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const shape = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const message = typeof shape.message === 'string' && shape.message !== '' ? shape.message : String(error);
  // The body's own code and message count too (OpenAI: code context_length_exceeded).
  const evidence = `${message} ${typeof shape.code === 'string' ? shape.code : ''} ${bodyText(shape.error)}`;
  const status = typeof shape.status === 'number' ? shape.status : undefined;
  // Class names, not `name`: the OpenAI SDK's errors are all named 'Error'.
  const name = [typeof shape.name === 'string' ? shape.name : '', ...classNames(error)].join(' ');
  if (status !== undefined) {
    const category = categoryOfStatus(status, evidence);
    return new ModelError(category, message, category === 'rate_limit' || category === 'server' ? retryAfterMs(shape.headers) ?? retryDelayInBody(evidence) : undefined);
  }
  if (/TimeoutError/.test(name)) return new ModelError('timeout', message);
  if (/ConnectionError/.test(name) || isNetworkFailure(error)) return new ModelError('network', message);
  if (OVERFLOW.test(evidence)) return new ModelError('context_overflow', message);
  // An error event inside a stream that had started (no status): the server gave up on this response.
  if (/APIError|ApiError|OpenAIError|AnthropicError/.test(name) || /^(got status|exception parsing|stream)/i.test(message)) return new ModelError('server', message);
  return new ModelError('invalid_request', message);
}

/**
 * An embedder's or reranker's error as it may be shown, logged and kept (a block's last error, a rerank
 * note that goes to the model): a refused key is named by its endpoint only, as the model providers'
 * are (a proxy may echo the key, or part of it, in its answer), and the key never appears in any other.
 */
export function withoutKey(error: unknown, key: string | undefined, endpoint: string): ModelError {
  const mapped = toModelError(error);
  if (mapped.category === 'authentication') return new ModelError('authentication', `${endpoint} refused the key`);
  if (!key || !mapped.message.includes(key)) return mapped;
  return new ModelError(mapped.category, maskKey(mapped.message, key), mapped.retryAfterMs);
}

/** A server's text with the key in it, wherever it is, replaced (before any cut: a key cut in two is not found). */
export function maskKey(text: string, key: string | undefined): string {
  return key ? text.split(key).join('[key]') : text;
}

function categoryOfStatus(status: number, message: string): ModelErrorCategory {
  // Only structured signs count: ordinary per-minute limits also mention quotas and billing in prose.
  if (status === 429) return OUT_OF_QUOTA.test(message) && !/RetryInfo/.test(message) ? 'invalid_request' : 'rate_limit';
  if (status === 408) return 'timeout';
  // A conflict (a concurrent request on the same object) clears on its own, as the SDKs treat it.
  if (status === 409) return 'server';
  if (status === 401 || status === 403 || BAD_KEY.test(message)) return 'authentication';
  if (status === 413) return 'context_overflow';
  if (status >= 500) return OVERFLOW.test(message) ? 'context_overflow' : 'server';
  return OVERFLOW.test(message) ? 'context_overflow' : 'invalid_request';
}

/** `retry-after-ms` (OpenAI, Anthropic), then `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: SdkErrorShape['headers']): number | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Gemini sends no retry headers through its SDK, but a google.rpc.RetryInfo `retryDelay` ("23s") in the body. */
function retryDelayInBody(text: string): number | undefined {
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(text);
  return match ? Number.parseFloat(match[1]!) * 1000 : undefined;
}

function isNetworkFailure(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at && typeof at === 'object' && depth < 5; at = (at as SdkErrorShape).cause, depth++) {
    const code = (at as SdkErrorShape).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if ((at as SdkErrorShape).message === 'fetch failed') return true;
  }
  return false;
}

function classNames(error: unknown): string[] {
  const names: string[] = [];
  for (let proto: unknown = typeof error === 'object' && error !== null ? Object.getPrototypeOf(error) : null; proto && proto !== Object.prototype && names.length < 8; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string') names.push(name);
  }
  return names;
}

function bodyText(body: unknown): string {
  try {
    return body === undefined ? '' : JSON.stringify(body).slice(0, 2_000);
  } catch {
    return '';
  }
}
