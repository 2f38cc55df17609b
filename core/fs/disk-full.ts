import { sep } from 'node:path';
import { KernelError, isKernelError } from '../errors.js';

/**
 * What a write that found no room was for: a kind a person recognises ("document", "audit log",
 * "session", "snapshot object", "job record", "index"…) and the file, relative to the workspace where
 * it is in one.
 */
export interface DiskWrite {
  what: string;
  file: string;
  /** What the failure left behind, when that is not simply "nothing was written". */
  note?: string;
  details?: Record<string, unknown>;
}

/** ENOSPC: no block left; EDQUOT: the user's quota is used up; SQLITE_FULL: SQLite's word for either. */
const FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** Whether an error (or one it was caused by) means the disk or the quota is full. */
export function isDiskFull(error: unknown): boolean {
  let at: unknown = error;
  for (let depth = 0; depth < 5 && at instanceof Error; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && FULL_CODES.has(code)) return true;
    at = at.cause;
  }
  return false;
}

/**
 * The one mapping from a full disk to `DISK_FULL` (HTTP 507), naming what could not be written; any
 * other error is returned as it is. Used where writes leave the kernel's hands (atomic file writes,
 * the audit append, SQLite transactions), so that no full disk reaches a caller as "internal error".
 * An error that is already DISK_FULL keeps its own, closer, naming.
 */
export function diskFull(error: unknown, write: DiskWrite): unknown {
  if (!isDiskFull(error) || (isKernelError(error) && error.code === 'DISK_FULL')) return error;
  const reason = (error as { code?: string }).code;
  return new KernelError('DISK_FULL',
    `No space left on the disk: the ${write.what} ${write.file} could not be written${write.note ? ` (${write.note})` : ''}. Free some space and try again.`,
    { cause: error, details: { ...write.details, what: write.what, file: write.file, ...(reason ? { reason } : {}) } });
}

/**
 * The workspace's top folders and what their files are (DESIGN.md §2). A path is matched from its end,
 * so a workspace that itself sits under a folder called `data` is still read right.
 */
const KINDS: ReadonlyMap<string, (rest: readonly string[]) => string> = new Map<string, (rest: readonly string[]) => string>([
  ['data', (rest) => (rest.at(-1) === '.notebook.json' ? 'notebook settings' : rest.at(-1)?.endsWith('.json') ? 'document' : 'notes file')],
  ['audit', (rest) => ({ 'audit.jsonl': 'audit log', 'audit.head.json': 'audit head', 'anchors.jsonl': 'audit anchors' } as Record<string, string>)[rest[0] ?? ''] ?? 'audit file'],
  ['repo', (rest) => (rest[0] === 'objects' ? 'snapshot object' : rest[0] === 'snapshots' ? 'snapshot record' : 'snapshot repository file')],
  ['jobs', () => 'job record'],
  ['agent', (rest) => (rest[0] === 'sessions' ? 'session' : rest[0] === 'grants.json' ? 'grants' : rest[0] === 'confirmations.json' ? 'confirmations' : 'agent file')],
  ['index', () => 'index'],
  ['history', () => 'document history'],
  ['.quire', (rest) => (rest[0] === 'kernel.lock' ? 'workspace lock' : rest[0] === 'journal' ? 'change journal' : 'kernel file')],
]);

/** Names a file for a DISK_FULL error from where it is in the workspace; a file elsewhere is named by its path. */
export function describeWrite(path: string): DiskWrite {
  const parts = path.split(sep).filter((part) => part !== '');
  // The nearest top folder from the end: ids and file names below a top folder never repeat one of them.
  for (let i = parts.length - 2; i >= 0; i--) {
    const kind = KINDS.get(parts[i]!);
    if (kind) return { what: kind(parts.slice(i + 1)), file: parts.slice(i).join('/') };
  }
  return { what: 'file', file: path };
}
