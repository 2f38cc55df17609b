import { KernelError } from '../errors.js';
import { MAX_JSON_DEPTH, pathPastDepth, shortPointer } from '../util/json-depth.js';
import { TRANSIENT_FIELDS } from './session-types.js';

/** Fields of session.json the kernel reads and writes; any other a client sends is kept as it is. */
const KERNEL_FIELDS: ReadonlySet<string> = new Set([
  'id', 'title', 'entries', 'revision', 'lastCommittedTurnID', 'createdAt', 'updatedAt', 'promptTokens', 'completionTokens',
]);

/** One kept unknown field, and all of them together (UTF-8 bytes of name and JSON value). */
export const MAX_UNKNOWN_FIELD_BYTES = 64 * 1024;
export const MAX_UNKNOWN_BYTES = 256 * 1024;

function invalid(field: string, message: string, details: Record<string, unknown>): KernelError {
  return new KernelError('INVALID_INPUT', `invalid session data: ${message}`, { details: { field, ...details } });
}

/**
 * A session may be saved by any client with fields of its own, and every later save and read carries
 * them: a value nested thousands deep would overflow the stack when written (JSON.stringify recurses),
 * and a large one would cost every save of the session.
 */
export function checkSessionDepth(session: Record<string, unknown>): void {
  const path = pathPastDepth(unchecked(session), MAX_JSON_DEPTH);
  if (path === undefined) return;
  const field = path[0] ?? '';
  const pointer = shortPointer(path);
  throw invalid(field, `'${field}' nests deeper than ${MAX_JSON_DEPTH} levels (at ${pointer})`, {
    limit: MAX_JSON_DEPTH, issues: [{ pointer, keyword: 'maxDepth', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }],
  });
}

/** Checks the unknown fields a saved session would keep (those sent now and those kept from before). */
export function checkKeptFields(session: Record<string, unknown>): void {
  let total = 0;
  for (const [field, value] of Object.entries(session)) {
    if (KERNEL_FIELDS.has(field) || TRANSIENT_FIELDS.has(field) || value === undefined) continue;
    // Measured as written: JSON, UTF-8 bytes (the depth was checked first, so this cannot overflow).
    const bytes = Buffer.byteLength(field) + Buffer.byteLength(JSON.stringify(value) ?? '');
    if (bytes > MAX_UNKNOWN_FIELD_BYTES) {
      throw invalid(field, `the field '${field.slice(0, 100)}' holds ${bytes} bytes; a field of its own may hold ${MAX_UNKNOWN_FIELD_BYTES}`, { limit: MAX_UNKNOWN_FIELD_BYTES, bytes });
    }
    total += bytes;
    if (total > MAX_UNKNOWN_BYTES) {
      throw invalid(field, `fields of its own hold more than ${MAX_UNKNOWN_BYTES} bytes together (reached at '${field.slice(0, 100)}')`, { limit: MAX_UNKNOWN_BYTES, bytes: total });
    }
  }
}

const isFrozenObject = (value: unknown): boolean => typeof value === 'object' && value !== null && Object.isFrozen(value);

/**
 * The parts of a save not checked yet. A frozen value is one the store holds (session-history.ts): it
 * was checked when it was saved, and a turn's save carries the whole history again with a few entries
 * more, so walking it all would make every save cost the whole session. Entries keep their index as
 * the key, so a path still names the right one.
 */
function unchecked(session: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(session)) {
    if (isFrozenObject(value)) continue;
    if (field !== 'entries' || !Array.isArray(value)) {
      out[field] = value;
      continue;
    }
    const fresh: Record<string, unknown> = {};
    value.forEach((entry: unknown, index) => { if (!isFrozenObject(entry)) fresh[index] = entry; });
    out[field] = fresh;
  }
  return out;
}
