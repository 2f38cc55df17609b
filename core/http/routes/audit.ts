import { open } from 'node:fs/promises';
import { Hono } from 'hono';
import type { AuditRecord } from '../../audit/audit-record.js';
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
 * kind) and action, in pages (`before`: the seq to continue below). Read from the end of the file, so
 * a page costs what it shows, however long the log; one scan reads at most 64 MB and says where it
 * stopped. `POST /api/audit/verify`: walks the whole chain and says whether and where it was altered.
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
  app.post('/verify', async (c) => c.json({ verification: await kernel.audit.verify() }));
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
    let position = (await handle.stat()).size;
    let carry: Buffer = Buffer.alloc(0);
    let scanned = 0;
    let lastSeq: number | undefined;
    while (position > 0 && records.length < filter.limit) {
      if (scanned >= MAX_SCAN_BYTES) return { records, ...(lastSeq !== undefined ? { scannedTo: lastSeq } : {}) };
      const size = Math.min(CHUNK, position);
      position -= size;
      scanned += size;
      const buffer = Buffer.alloc(size);
      await handle.read(buffer, 0, size, position);
      // Split on newline bytes before decoding: a chunk may begin inside a character.
      const data = Buffer.concat([buffer, carry]);
      const first = position > 0 ? data.indexOf(10) : -1;
      carry = first === -1 && position > 0 ? data : data.subarray(0, Math.max(first, 0));
      if (first === -1 && position > 0) continue;
      const lines = data.subarray(position > 0 ? first + 1 : 0).toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0 && records.length < filter.limit; i--) {
        const line = lines[i]!.trim();
        if (line === '') continue;
        let record: AuditRecord;
        try {
          record = JSON.parse(line) as AuditRecord;
        } catch {
          continue;
        }
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
