import type { Context } from 'hono';
import { KernelError, isKernelError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import { HTTP_STATUS } from './status-table.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

/** Every error leaves the server as `{ error: { code, message, details } }` with the status from the table. */
export function errorResponse(c: Context, error: unknown, log?: Logger, headers: Record<string, string> = {}): Response {
  const kernelError = isKernelError(error) ? error : new KernelError('INTERNAL', 'internal error');
  const status = HTTP_STATUS[kernelError.code];
  // Unexpected failures are logged with their cause; their text is not sent, it may name internals.
  if (status >= 500) log?.error('request failed', { code: kernelError.code, path: c.req.path, error: describe(error) });
  const body: ErrorBody = { error: { code: kernelError.code, message: kernelError.message, details: kernelError.details } };
  // A refusal that clears by itself says when to try again (RFC 9110 §10.2.3).
  const { retryAfterSeconds } = kernelError.details;
  const retry: Record<string, string> = typeof retryAfterSeconds === 'number' && (status === 503 || status === 429) ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } : {};
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...retry, ...headers } });
}

export function httpError(code: ErrorCode, message: string, details?: Record<string, unknown>): KernelError {
  return new KernelError(code, message, details ? { details } : {});
}

/** The error and what caused it: a caller is told a system error's file by its last part, the log keeps the whole path. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (cause: ${error.cause.message})` : '';
  return `${error.name}: ${error.message}${cause}`;
}
