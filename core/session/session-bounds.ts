import { KernelError } from '../errors.js';
import { MAX_JSON_DEPTH, pathPastDepth, shortPointer } from '../util/json-depth.js';
import { jsonEqual } from './json-values.js';
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

/**
 * Checks the unknown fields a saved session would keep (those sent now and those kept from before).
 * Only a save that sets or changes one is held to the bounds, and only then are they measured: a
 * turn's commit carries them unchanged, and a session stored before the bounds must still take it.
 */
export function checkKeptFields(session: Record<string, unknown>, stored: Record<string, unknown> | undefined): void {
  const kept = Object.entries(session).filter(([field, value]) => !KERNEL_FIELDS.has(field) && !TRANSIENT_FIELDS.has(field) && value !== undefined);
  const changed = kept.filter(([field, value]) => stored === undefined || !(field in stored) || !jsonEqual(stored[field], value));
  if (changed.length === 0) return;
  // Measured as written: JSON, UTF-8 bytes (the depth was checked first, so this cannot overflow).
  const sizeOf = ([field, value]: [string, unknown]): number => Buffer.byteLength(field) + Buffer.byteLength(JSON.stringify(value) ?? '');
  for (const entry of changed) {
    const bytes = sizeOf(entry);
    const field = entry[0];
    if (bytes > MAX_UNKNOWN_FIELD_BYTES) {
      throw invalid(field, `the field '${field.slice(0, 100)}' holds ${bytes} bytes; a field of its own may hold ${MAX_UNKNOWN_FIELD_BYTES}`, { limit: MAX_UNKNOWN_FIELD_BYTES, bytes });
    }
  }
  const total = kept.reduce((sum, entry) => sum + sizeOf(entry), 0);
  if (total > MAX_UNKNOWN_BYTES) {
    const field = changed[changed.length - 1]![0];
    throw invalid(field, `fields of its own would hold ${total} bytes together; they may hold ${MAX_UNKNOWN_BYTES}`, { limit: MAX_UNKNOWN_BYTES, bytes: total });
  }
}

const isFrozenObject = (value: unknown): boolean => typeof value === 'object' && value !== null && Object.isFrozen(value);

/**
 * The parts of a save not checked yet. A frozen value is one the store holds (journaled-documents.ts): it
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
