import type { MiddlewareHandler } from 'hono';
import { KernelError } from '../../errors.js';
import type { HttpEnv } from '../http-env.js';

/**
 * Refuses a declared Content-Length over the limit before anything reads the body, and records the
 * limit so that readJsonBody enforces it on bodies sent without a length (chunked). Hono's own
 * bodyLimit re-wraps every request in a new stream, which cost most of the throughput of a small call.
 */
export function bodySizeLimit(maxBytes: number): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
    c.set('bodyLimit', maxBytes);
    await next();
  };
}

export function tooLarge(maxBytes: number): KernelError {
  return new KernelError('PAYLOAD_TOO_LARGE', `the body is larger than ${maxBytes} bytes`, { details: { limit: maxBytes } });
}
