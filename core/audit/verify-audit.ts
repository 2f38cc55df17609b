import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { AuditAnchor } from './anchors.js';
import { GENESIS_HASH, hashRecord, type AuditRecord } from './audit-record.js';
import { RECOVER_TAIL_ACTION, parseRecordLine } from './recover-tail.js';

export interface AuditHead {
  seq: number;
  hash: string;
}

/** A torn end set aside at a start, as the log itself records it, and whether the kept bytes are still there. */
export interface RecoveredTail {
  /** The line that records the recovery. */
  seq: number;
  /** The last whole line before the torn bytes. */
  afterSeq: number;
  bytes: number;
  keptIn: string;
  kept: 'intact' | 'missing' | 'changed';
}

/** Bytes of a failed append that an older kernel left before a record, on the same line. */
export interface StrayBytes {
  line: number;
  bytes: number;
}

/** One anchor held against the log: it matches, or the line it names has another hash (or is gone). */
export interface AnchorCheck {
  anchor: AuditAnchor;
  ok: boolean;
  reason?: string;
}

/** What verify found besides the verdict. */
export interface VerificationFacts {
  /** Whole lines, torn end excluded. */
  lines: number;
  /** Where the chain ends: the last whole line's seq and hash. */
  last: AuditHead;
  /** A torn end not yet set aside (the next start does it): bytes of an append that never completed. */
  torn?: { bytes: number };
  recovered: RecoveredTail[];
  /** Torn ends kept beside the log that no line records (a start that set them aside, then found no room to say so). */
  unrecorded: string[];
  stray: StrayBytes[];
  /** Anchors checked, in order of seq; anchors past a broken line are not checked. */
  anchors: AnchorCheck[];
  /** The last line a matching anchor vouches for (0: none); the lines after it are unanchored. */
  anchoredThrough: number;
  /**
   * Lines after the one the head file records, which the log has there as the head says: a running
   * kernel writes its head a little after its lines (about 100 ms), and a crash between the two leaves
   * it behind until the next start catches it up. Not tampering; said.
   */
  headLags?: number;
}

export type AuditVerification =
  | (VerificationFacts & { ok: true })
  | (VerificationFacts & { ok: false; line: number; reason: string });

/**
 * Walks the chain line by line and reports the first line that was altered (its hash no longer matches),
 * removed or reordered (its `prev` or `seq` does not follow), or cut from the end (the head file says
 * more). A torn end (an append that never completed, so was never acknowledged nor counted in the
 * head) is reported as such, not as tampering.
 */
export async function verifyAuditLog(file: string, head?: AuditHead, anchors: readonly AuditAnchor[] = [], upTo?: number): Promise<AuditVerification> {
  const facts: VerificationFacts = {
    lines: 0, last: { seq: 0, hash: GENESIS_HASH }, recovered: [], unrecorded: [], stray: [], anchors: [], anchoredThrough: 0,
  };
  const anchorsAt = groupBySeq(anchors);
  holdAnchors(facts, anchorsAt.get(0), GENESIS_HASH);
  // The log's hash at the seq the head records (a head behind the log must name a line the log has).
  let atHead: string | undefined;
  const recoveries: AuditRecord[] = [];
  let failure: { line: number; reason: string } | undefined;
  const visit = (text: string): void => {
    facts.lines++;
    if (failure) return;
    const checked = checkLine(text, facts.last.hash, facts.last.seq + 1);
    if ('reason' in checked) {
      failure = { line: facts.lines, reason: checked.reason };
      return;
    }
    const { record, stray } = checked;
    if (stray > 0) facts.stray.push({ line: facts.lines, bytes: stray });
    if (record.plugin === 'core' && record.action === RECOVER_TAIL_ACTION) recoveries.push(record);
    facts.last = { seq: record.seq, hash: record.hash };
    if (record.seq === head?.seq) atHead = record.hash;
    holdAnchors(facts, anchorsAt.get(record.seq), record.hash);
  };
  // Streamed, a line at a time, yielding between chunks: the whole log in one string held the event
  // loop for the walk and could not be made past about 512 MB. A line is checked once the next one has
  // begun: the last complete line that does not parse belongs to a torn end.
  let carry = '';
  let pending: string | undefined;
  if (existsSync(file) && upTo !== 0) {
    let chunks = 0;
    for await (const chunk of createReadStream(file, { encoding: 'utf8', ...(upTo !== undefined ? { end: upTo - 1 } : {}) })) {
      const parts = `${carry}${chunk as string}`.split('\n');
      carry = parts.pop()!;
      for (const part of parts) {
        if (pending !== undefined) visit(pending);
        pending = part;
      }
      if (++chunks % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
  let torn = carry;
  if (pending !== undefined) {
    if (parseRecordLine(pending)) visit(pending);
    else torn = `${pending}\n${torn}`;
  }
  const tornBytes = Buffer.byteLength(torn);
  if (tornBytes > 0) facts.torn = { bytes: tornBytes };
  if (failure) return { ...facts, ok: false, ...failure };
  for (const anchor of anchors.filter((candidate) => candidate.seq > facts.last.seq)) {
    facts.anchors.push({ anchor, ok: false, reason: `${anchor.source} anchors seq ${anchor.seq}, but the log ends at seq ${facts.last.seq}: lines were removed from the end` });
  }
  facts.recovered = await Promise.all(recoveries.map((record) => describeRecovery(file, record)));
  const recorded = new Set(facts.recovered.map((tail) => tail.keptIn));
  const prefix = `${basename(file)}.torn-`;
  facts.unrecorded = (await readdir(dirname(file)).catch(() => [] as string[])).filter((name) => name.startsWith(prefix) && !recorded.has(name)).sort();
  const problem = anchorProblem(facts) ?? checkHead(facts, head, atHead);
  return problem ? { ...facts, ok: false, ...problem } : { ...facts, ok: true };
}

function groupBySeq(anchors: readonly AuditAnchor[]): Map<number, AuditAnchor[]> {
  const bySeq = new Map<number, AuditAnchor[]>();
  for (const anchor of anchors) bySeq.set(anchor.seq, [...bySeq.get(anchor.seq) ?? [], anchor]);
  return bySeq;
}

/** Holds the anchors of one seq against the hash the log has there. */
function holdAnchors(facts: VerificationFacts, anchors: readonly AuditAnchor[] | undefined, hash: string): void {
  for (const anchor of anchors ?? []) {
    if (anchor.hash === hash) {
      facts.anchors.push({ anchor, ok: true });
      facts.anchoredThrough = Math.max(facts.anchoredThrough, anchor.seq);
    } else {
      facts.anchors.push({ anchor, ok: false, reason: `${anchor.source} records seq ${anchor.seq} as ${anchor.hash.slice(0, 16)}…, the log has ${hash.slice(0, 16)}…: the log was rewritten at or before line ${anchor.seq}` });
    }
  }
}

function anchorProblem(facts: VerificationFacts): { line: number; reason: string } | undefined {
  const failed = facts.anchors.find((check) => !check.ok);
  return failed ? { line: Math.min(Math.max(failed.anchor.seq, 1), facts.lines + 1), reason: failed.reason ?? 'an anchor does not match' } : undefined;
}

/** Whole lines, and the torn end: an unterminated last line, or a last line that is no record at all. */
function checkHead(facts: VerificationFacts, head: AuditHead | undefined, atHead: string | undefined): { line: number; reason: string } | undefined {
  const { lines, last } = facts;
  if (!head && lines > 0) return { line: lines + 1, reason: 'audit.head.json is missing, so lines removed from the end cannot be ruled out' };
  if (head && head.seq > last.seq) {
    const how = facts.torn ? 'the end of the log does not parse, yet the head counts it as written: an acknowledged line was damaged or' : 'lines were';
    return { line: lines + 1, reason: `the log ends at seq ${last.seq} but the head records seq ${head.seq}: ${how} removed from the end` };
  }
  // Behind the log, at a line the log has as the head says: a running kernel's head, or a crash's.
  if (head && head.seq < last.seq && head.hash === (head.seq === 0 ? GENESIS_HASH : atHead)) {
    facts.headLags = last.seq - head.seq;
    return undefined;
  }
  if (head && (head.seq !== last.seq || head.hash !== last.hash)) {
    return { line: Math.min(head.seq + 1, lines), reason: `the head records seq ${head.seq}, the log ends at seq ${last.seq}: the head lags (a crash between two writes, caught up on the next start) or lines were changed or added by hand` };
  }
  return undefined;
}

async function describeRecovery(file: string, record: AuditRecord): Promise<RecoveredTail> {
  const details = record.details ?? {};
  const keptIn = String(details.keptIn ?? '');
  const path = join(dirname(file), keptIn);
  const bytes = keptIn && existsSync(path) ? await readFile(path) : undefined;
  const kept = bytes === undefined ? 'missing' : createHash('sha256').update(bytes).digest('hex') === record.argsHash ? 'intact' : 'changed';
  return { seq: record.seq, afterSeq: Number(details.afterSeq ?? record.seq - 1), bytes: Number(details.bytes ?? 0), keptIn, kept };
}

function checkLine(text: string, prev: string, expectedSeq: number): { reason: string } | { record: AuditRecord; stray: number } {
  const parsed = parseRecordLine(text);
  if (!parsed) return { reason: 'the line is not valid JSON' };
  const { record } = parsed;
  if (record.seq !== expectedSeq) {
    return { reason: `expected seq ${expectedSeq}, found ${String(record.seq)}: a line before it is missing or out of order` };
  }
  if (record.prev !== prev) return { reason: 'its prev hash does not match the line before: a line was removed or altered' };
  const { hash, ...unsealed } = record;
  if (hashRecord(unsealed) !== hash) return { reason: 'its content does not match its hash: the line was altered' };
  return parsed;
}
