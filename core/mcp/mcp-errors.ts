import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isKernelError } from '../errors.js';

/** MCP's code for a resource that does not exist (the specification's "Resource not found"). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A read refused by the kernel's rules (local-only notes withheld from MCP clients, a reader's role): a
 * server error of its own, not -32603 "Internal error", which a client takes for a fault to retry.
 */
export const REFUSED = -32003;
const REFUSALS: ReadonlySet<string> = new Set(['FORBIDDEN', 'EGRESS_DENIED', 'ACTION_DENIED', 'CAPABILITY_DENIED']);

/**
 * A kernel error as a JSON-RPC error the client can act on: bad input is -32602 (invalid params), a
 * missing resource or prompt `notFound`, a refusal REFUSED; the rest stay -32603. The SDK answers -32603 "Internal error"
 * for any error without a numeric code, so a bad URI, a missing document or an unknown prompt all
 * looked like a crash of the server. The kernel's own code goes along in `data`.
 */
export function asJsonRpcError(error: unknown, notFound: number): unknown {
  if (!isKernelError(error)) return error;
  const code = error.code === 'INVALID_INPUT' ? ErrorCode.InvalidParams : error.code === 'NOT_FOUND' ? notFound : REFUSALS.has(error.code) ? REFUSED : ErrorCode.InternalError;
  // The message as the kernel wrote it (clients matched it before); the kernel's code is in data.
  return Object.assign(new Error(error.message), { code, data: { code: error.code, ...(error.details ?? {}) } });
}

/** The handler, its kernel errors answered as asJsonRpcError says. */
export function withJsonRpcErrors<A extends unknown[], R>(handler: (...args: A) => R | Promise<R>, notFound: number): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      throw asJsonRpcError(error, notFound);
    }
  };
}

/** The server's request handlers registered through this answer kernel errors as asJsonRpcError says. */
export function answeringJsonRpcErrors(server: Server, notFound: number): Pick<Server, 'setRequestHandler'> {
  return {
    setRequestHandler: ((schema: Parameters<Server['setRequestHandler']>[0], handler: (...args: unknown[]) => unknown) =>
      server.setRequestHandler(schema, withJsonRpcErrors(handler, notFound) as Parameters<Server['setRequestHandler']>[1])) as Server['setRequestHandler'],
  };
}
