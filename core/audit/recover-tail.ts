import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { KernelError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic-write.js';
import type { AuditEntry, AuditRecord } from './audit-record.js';
import { readTail } from './read-last-line.js';

/** A parsed line: its record, and how many stray bytes came before the record on that line. */
export interface RecordLine {
  record: AuditRecord;
  stray: number;
}

/** Past this many candidate starts a line is damage, not a torn append followed by a record. */
const MAX_RECORD_STARTS = 64;

/**
 * Parses one line of the log. Kernels before the append was cut back on failure left the torn bytes of
 * a failed append in place, and the next line was written right after them: such a line is read from
 * the record on, and the stray bytes are counted (and reported by verify) rather than breaking the log.
 * The record must still chain; bytes before it carry no audit meaning.
 */
export function parseRecordLine(text: string): RecordLine | undefined {
  for (let at = 0, tries = 0; at !== -1 && tries < MAX_RECORD_STARTS; at = text.indexOf('{', at + 1), tries++) {
    const record = parseRecord(at === 0 ? text : text.slice(at));
    if (record) return { record, stray: Buffer.byteLength(text.slice(0, at)) };
  }
  return undefined;
}

function parseRecord(text: string): AuditRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<AuditRecord> | null;
    return value !== null && typeof value === 'object' && typeof value.seq === 'number' && typeof value.hash === 'string' ? value as AuditRecord : undefined;
  } catch {
    return undefined;
  }
}

export interface LogEnd {
  /** The last whole record, where the chain continues. */
  last: AuditRecord | undefined;
  /** Where torn bytes start (a line without its newline, or a last line that is no record), if any. */
  tornFrom: number | undefined;
  size: number;
}

/**
 * Where the log really ends. An append cut short by a crash or a full disk leaves a last line without
 * its newline, or (after a crash, on some file systems) a line of zeros: that end is torn, and the
 * line before it is the last record. Two bad lines in a row are not a torn append, and are refused.
 */
export async function findLogEnd(file: string): Promise<LogEnd> {
  if (!existsSync(file)) return { last: undefined, tornFrom: undefined, size: 0 };
  const { size, lines, tornFrom } = await readTail(file);
  let line = lines.at(-1);
  let parsed = line && parseRecordLine(line.text);
  let cut = tornFrom;
  if (line && !parsed) {
    cut = line.start;
    line = lines.at(-2);
    if (!line && cut > 0) throw new KernelError('AUDIT_CHAIN_BROKEN', `the line before the torn end of ${file} is too long to be a record`, { details: { file } });
    parsed = line && parseRecordLine(line.text);
    if (line && !parsed) throw new KernelError('AUDIT_CHAIN_BROKEN', `the last two lines of ${file} are not records: that is damage, not an append cut short. Run 'quire audit verify'`, { details: { file } });
  }
  return { last: parsed?.record, tornFrom: cut, size };
}

/** Torn bytes set aside: where they were kept, how many, and their SHA-256 (recorded in the log). */
export interface KeptTail {
  keptIn: string;
  bytes: number;
  sha256: string;
}

/**
 * Moves the torn end of the log into `<log>.torn-<time>` (kept, synced, before the log is cut, so a
 * crash in between loses nothing) and cuts the log back to its last whole line.
 */
export async function setTornTailAside(file: string, from: number, size: number): Promise<KeptTail> {
  const handle = await open(file, 'r+');
  try {
    const torn = Buffer.alloc(size - from);
    await handle.read(torn, 0, torn.length, from);
    const keptIn = `${file}.torn-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await writeFileAtomic(keptIn, torn, { mode: 0o600 });
    await handle.truncate(from);
    await handle.datasync();
    return { keptIn: basename(keptIn), bytes: torn.length, sha256: createHash('sha256').update(torn).digest('hex') };
  } finally {
    await handle.close();
  }
}

export const RECOVER_TAIL_ACTION = 'recover_tail';

/** The line that says, in the chain itself, that a torn end was set aside (its hash is the torn bytes'). */
export function recoveryEntry(kept: KeptTail, afterSeq: number): AuditEntry {
  return {
    principal: { kind: 'kernel', name: 'kernel', role: 'admin' },
    plugin: 'core', tool: 'audit', action: RECOVER_TAIL_ACTION, effects: ['localWrite'],
    argsHash: kept.sha256, outcome: 'ok',
    details: { bytes: kept.bytes, keptIn: kept.keptIn, afterSeq },
  };
}
