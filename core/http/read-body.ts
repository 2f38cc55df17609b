import type { Context } from 'hono';
import type { HttpEnv } from './http-env.js';
import { tooLarge } from './middleware/request-guard.js';
import type { ValidateFunction } from 'ajv';
import { KernelError } from '../errors.js';
import { formatIssues, getKernelAjv, runValidator } from '../schema/ajv.js';
import { MAX_JSON_DEPTH, pathPastDepth, shortPointer } from '../util/json-depth.js';

/**
 * Reads a JSON request body. An empty body is `{}`; a body must be sent as application/json (which a
 * cross-site HTML form cannot do), and invalid JSON is named as such, with the parser's reason.
 */
export function readJsonBody(c: Context<HttpEnv>): Promise<unknown> {
  // Chained rather than async/await: this is the path of every call, and each promise costs.
  return readBodyText(c).then((text) => parseJsonBody(text, c.req.header('content-type')));
}

function parseJsonBody(text: string, type = ''): unknown {
  if (text.trim() === '') return {};
  if (!/^application\/json\b/i.test(type)) {
    throw new KernelError('UNSUPPORTED_MEDIA_TYPE', `the body must be sent with Content-Type: application/json (got '${type || 'none'}')`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KernelError('INVALID_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
  checkDepth(value);
  return value;
}

/**
 * JSON.parse takes any depth, but what handles the value afterwards (serialising, hashing, validating)
 * recurses: a body nested thousands deep would overflow the stack there and answer 500.
 */
function checkDepth(value: unknown): void {
  const path = pathPastDepth(value, MAX_JSON_DEPTH);
  if (path === undefined) return;
  const pointer = shortPointer(path);
  throw new KernelError('INVALID_INPUT', `invalid body: ${path[0] ?? 'the body'} nests deeper than ${MAX_JSON_DEPTH} levels (at ${pointer})`, {
    details: { field: path[0] ?? '', limit: MAX_JSON_DEPTH, issues: [{ pointer, keyword: 'maxDepth', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }] },
  });
}

/**
 * A body with a declared length was checked against the limit already and is read in one go; one
 * without (chunked) is read chunk by chunk and refused as soon as it passes the limit.
 */
function readBodyText(c: Context<HttpEnv>): Promise<string> {
  const limit = c.get('bodyLimit');
  if (limit === undefined || c.req.header('content-length') !== undefined) return c.req.text();
  return readChunked(c, limit);
}

async function readChunked(c: Context<HttpEnv>, limit: number): Promise<string> {
  const body = c.req.raw.body;
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Compiles a route's body schema once, on the route's first request (compiling all of them when the
 * routes are made cost 130 ms of every start); the returned function validates and throws
 * INVALID_INPUT naming pointers.
 */
export function bodyValidator<T>(schema: Record<string, unknown>): (value: unknown) => T {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= getKernelAjv().compile(schema);
    const result = runValidator<T>(validate, value);
    if (!result.ok) throw new KernelError('INVALID_INPUT', `invalid body: ${formatIssues(result.issues)}`, { details: { issues: result.issues } });
    return result.value;
  };
}
