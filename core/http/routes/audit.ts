import { open, type FileHandle } from 'node:fs/promises';
import { Hono } from 'hono';
import { workspaceAnchors } from '../../audit/anchors.js';
import type { AuditRecord } from '../../audit/audit-record.js';
import { parseRecordLine } from '../../audit/recover-tail.js';
import { KernelError } from '../../errors.js';
import type { Kernel } from '../../kernel.js';
import type { HttpEnv } from '../http-env.js';

const OUTCOMES = ['ok', 'error', 'refused', 'egress_denied'];
const MAX_LIMIT = 500;
/** Bytes read from the end per step; a page stops once it has its lines or this much was read. */
const CHUNK = 64 * 1024;
const MAX_SCAN_BYTES = 64 * 1024 * 1024;

interface AuditFilter { outcome?: string; plugin?: string; principal?: string; action?: string; before?: number; limit: number }

/**
 * `GET /api/audit`: the audit log, newest first, filtered by outcome, plugin, principal (its name or
 * kind) and action, in pages (`before`: the seq to continue below). Read backwards from the end, or
 * from where `before` lies (found by bisection), so a page reads only records it may show; one page
 * reads at most 64 MB and, when a filter matched too few there, says where to go on (`next`). `POST /api/audit/verify`: walks the whole chain and says whether and where it was altered.
 * Administrators only: the log names every caller.
 */
export function auditRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', async (c) => {
    const filter = parseFilter(c.req.query());
    const { records, scannedTo } = await readBackwards(kernel.audit.logFile, filter);
    const next = records.length === filter.limit ? records.at(-1)!.seq : scannedTo;
    return c.json({ records, ...(next !== undefined && next > 1 ? { next } : {}) });
  });
  // As `quire audit verify`: against every anchor the workspace holds (snapshots' audit heads, the
  // anchors file), so that a log rewritten with its chain and head recomputed is found here too.
  app.post('/verify', async (c) => {
    const { anchors, problems } = await workspaceAnchors(kernel.workspace);
    const verification = await kernel.audit.verify(anchors);
    if (problems.length === 0 || !verification.ok) return c.json({ verification: problems.length > 0 ? { ...verification, anchorProblems: problems } : verification });
    return c.json({ verification: { ...verification, ok: false, line: 0, reason: `the anchors file is damaged: ${problems[0]}`, anchorProblems: problems } });
  });
  return app;
}

function parseFilter(query: Record<string, string>): AuditFilter {
  const filter: AuditFilter = { limit: 100 };
  for (const key of ['outcome', 'plugin', 'principal', 'action'] as const) {
    const value = query[key];
    if (value === undefined || value === '') continue;
    if (value.length > 200) throw new KernelError('INVALID_INPUT', `${key} is longer than 200 characters`, { details: { field: key } });
    filter[key] = value;
  }
  if (filter.outcome !== undefined && !OUTCOMES.includes(filter.outcome)) {
    throw new KernelError('INVALID_INPUT', `outcome must be one of ${OUTCOMES.join(', ')}`, { details: { field: 'outcome' } });
  }
  for (const key of ['before', 'limit'] as const) {
    const value = query[key];
    if (value === undefined) continue;
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1 || (key === 'limit' && number > MAX_LIMIT)) {
      throw new KernelError('INVALID_INPUT', `${key} must be a whole number from 1${key === 'limit' ? ` to ${MAX_LIMIT}` : ''}`, { details: { field: key } });
    }
    filter[key] = number;
  }
  return filter;
}

function matches(record: AuditRecord, filter: AuditFilter): boolean {
  if (filter.before !== undefined && record.seq >= filter.before) return false;
  if (filter.outcome && record.outcome !== filter.outcome) return false;
  if (filter.plugin && record.plugin !== filter.plugin) return false;
  if (filter.action && record.action !== filter.action && `${record.plugin}/${record.tool}/${record.action}` !== filter.action) return false;
  if (filter.principal && record.principal.name !== filter.principal && record.principal.kind !== filter.principal) return false;
  return true;
}

/** The newest records matching, read from the end of the log in chunks; `scannedTo`: the seq a stopped scan reached. */
async function readBackwards(file: string, filter: AuditFilter): Promise<{ records: AuditRecord[]; scannedTo?: number }> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return { records: [] };
  try {
    const records: AuditRecord[] = [];
    const size = (await handle.stat()).size;
    // Only what lies below `before` is read: found by bisection on the log's seq order, so that every
    // page, however deep, starts where it should and scans only records it may show.
    let position = filter.before === undefined ? size : await offsetOfSeq(handle, size, filter.before);
    let carry: Buffer = Buffer.alloc(0);
    let scanned = 0;
    let lastSeq: number | undefined;
    while (position > 0 && records.length < filter.limit) {
      if (scanned >= MAX_SCAN_BYTES) return { records, ...(lastSeq !== undefined ? { scannedTo: lastSeq } : {}) };
      const length = Math.min(CHUNK, position);
      position -= length;
      scanned += length;
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, position);
      // Split on newline bytes before decoding: a chunk may begin inside a character.
      const data = Buffer.concat([buffer, carry]);
      const first = position > 0 ? data.indexOf(10) : -1;
      carry = first === -1 && position > 0 ? data : data.subarray(0, Math.max(first, 0));
      if (first === -1 && position > 0) continue;
      const lines = data.subarray(position > 0 ? first + 1 : 0).toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0 && records.length < filter.limit; i--) {
        const line = lines[i]!.trim();
        if (line === '') continue;
        const parsed = parseRecordLine(line);
        if (!parsed) continue;
        const { record } = parsed;
        lastSeq = record.seq;
        // Below `before` nothing newer can follow: the log is in seq order.
        if (matches(record, filter)) records.push(record);
      }
    }
    return { records };
  } finally {
    await handle.close();
  }
}

/**
 * The byte offset of the first line whose seq is `before` or more (the log's size when none is): lines
 * are in seq order, so bisection over byte positions finds it in some 30 reads of a line each.
 */
async function offsetOfSeq(handle: FileHandle, size: number, before: number): Promise<number> {
  let low = 0;
  let high = size;
  while (high - low > CHUNK) {
    const middle = Math.floor((low + high) / 2);
    const line = await lineAfter(handle, middle, size);
    if (line === undefined || line.seq >= before) high = middle;
    else low = line.end;
  }
  // The last stretch line by line: where the first line of seq `before` or more starts. `high` may lie
  // inside the line before it (bisection stops at a byte, whose next line is the one sought): the walk
  // then ends past `high`, at that line's start. Returning `high` read the line before as a fragment
  // and dropped it from the page.
  let at = low;
  while (at < high) {
    const line = await lineAfter(handle, at, size, at === 0 || at === low);
    if (line === undefined || line.seq >= before) return line?.start ?? high;
    at = line.end;
  }
  return at;
}

/** The first whole line starting at or after `from` (at `from` itself when `atStart`): its seq and span. */
async function lineAfter(handle: FileHandle, from: number, size: number, atStart = from === 0): Promise<{ seq: number; start: number; end: number } | undefined> {
  let start = from;
  if (!atStart) {
    const before = Buffer.alloc(1);
    await handle.read(before, 0, 1, from - 1);
    if (before[0] !== 10) {
      // Inside a line: the next one starts after its newline.
      const head = await readUntilNewline(handle, from, size);
      if (head === undefined) return undefined;
      start = head;
    }
  }
  const end = await readUntilNewline(handle, start, size);
  if (end === undefined || end <= start) return undefined;
  const buffer = Buffer.alloc(Math.min(end - start, 1024 * 1024));
  await handle.read(buffer, 0, buffer.length, start);
  const parsed = parseRecordLine(buffer.toString('utf8').trim());
  return parsed ? { seq: parsed.record.seq, start, end } : undefined;
}

/** The offset just past the next newline at or after `from`, or undefined at the end of the file. */
async function readUntilNewline(handle: FileHandle, from: number, size: number): Promise<number | undefined> {
  const buffer = Buffer.alloc(16 * 1024);
  for (let at = from; at < size; at += buffer.length) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - at), at);
    const newline = buffer.subarray(0, bytesRead).indexOf(10);
    if (newline !== -1) return at + newline + 1;
  }
  return undefined;
}
