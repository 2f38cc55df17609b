import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { GENESIS_HASH, hashRecord, type AuditRecord } from './audit-record.js';

export interface AuditHead {
  seq: number;
  hash: string;
}

export type AuditVerification =
  | { ok: true; lines: number }
  | { ok: false; lines: number; line: number; reason: string };

/**
 * Walks the chain line by line and reports the first line that was altered (its hash no longer matches),
 * removed or reordered (its `prev` or `seq` does not follow), or cut from the end (the head file says more).
 */
export async function verifyAuditLog(file: string, head?: AuditHead): Promise<AuditVerification> {
  const text = existsSync(file) ? await readFile(file, 'utf8') : '';
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev = GENESIS_HASH;
  let seq = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = index + 1;
    const checked = checkLine(lines[index] ?? '', prev, seq + 1);
    if ('reason' in checked) return { ok: false, lines: lines.length, line, reason: checked.reason };
    prev = checked.record.hash;
    seq = checked.record.seq;
  }
  if (!head && lines.length > 0) {
    return { ok: false, lines: lines.length, line: lines.length + 1, reason: 'audit.head.json is missing, so lines removed from the end cannot be ruled out' };
  }
  if (head && head.seq > seq) {
    return { ok: false, lines: lines.length, line: lines.length + 1, reason: `the log ends at seq ${seq} but the head records seq ${head.seq}: lines were removed from the end` };
  }
  if (head && (head.seq !== seq || head.hash !== prev)) {
    return { ok: false, lines: lines.length, line: Math.min(head.seq + 1, lines.length), reason: `the head records seq ${head.seq}, the log ends at seq ${seq}: the head lags (a crash between two writes, caught up on the next start) or lines were changed or added by hand` };
  }
  return { ok: true, lines: lines.length };
}

function checkLine(text: string, prev: string, expectedSeq: number): { reason: string } | { record: AuditRecord } {
  let record: AuditRecord;
  try {
    record = JSON.parse(text) as AuditRecord;
  } catch {
    return { reason: 'the line is not valid JSON' };
  }
  if (record.seq !== expectedSeq) {
    return { reason: `expected seq ${expectedSeq}, found ${String(record.seq)}: a line before it is missing or out of order` };
  }
  if (record.prev !== prev) return { reason: 'its prev hash does not match the line before: a line was removed or altered' };
  const { hash, ...unsealed } = record;
  if (hashRecord(unsealed) !== hash) return { reason: 'its content does not match its hash: the line was altered' };
  return { record };
}
