/**
 * What recording one request's usage holds the event loop for: every embedding call records one (an
 * indexer batch, each semantic or hybrid query's embedding) and so does every model request.
 *   - baseline: the same insert into a WAL database with synchronous = FULL (an fsync of the WAL on
 *     the calling thread per record: how the ledger recorded until 2026-12-02);
 *   - the ledger: synchronous = NORMAL, the WAL synced on libuv's thread pool a little after a burst.
 * Records are spaced by GAP_MS (as requests come), alternating the two in ROUNDS rounds; p50, p99 and
 * max of the call, and the ledger's syncs. The disk is the workspace's (DIR, default a temporary folder
 * under the current directory, not /tmp, which may be memory).
 *   npm run build && node dist/bench/usage-ledger.js   (env: RECORDS=200 GAP_MS=20 ROUNDS=2 DIR=.)
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageLedger, type UsageRecord } from '../core/usage/usage-ledger.js';

const RECORDS = Number(process.env.RECORDS ?? 200);
const GAP_MS = Number(process.env.GAP_MS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const DIR = resolve(process.env.DIR ?? '.');

const RECORD: UsageRecord = { kind: 'embedding', provider: 'providers/openai', model: 'text-embedding-3-small', input: 96, cachedInput: 0, output: 0, reasoning: 0, estimated: true };
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timeCalls(record: () => void): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const t = process.hrtime.bigint();
    record();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    await sleep(GAP_MS);
  }
  return times.sort((a, b) => a - b);
}

function fullSyncTable(file: string): { record(): void; close(): void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE usage (id INTEGER PRIMARY KEY, at TEXT, kind TEXT, provider TEXT, model TEXT, input INTEGER)');
  const insert = db.prepare('INSERT INTO usage (at, kind, provider, model, input) VALUES (?, ?, ?, ?, ?)');
  return { record: () => insert.run(new Date().toISOString(), RECORD.kind, RECORD.provider, RECORD.model, RECORD.input), close: () => db.close() };
}

const describe = (times: number[]): string => `p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(DIR, '.bench-usage-'));
  console.log(`usage ledger bench: ${RECORDS} records ${GAP_MS} ms apart, ${ROUNDS} rounds, in ${dir}; load ${load()}`);
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const baseline = fullSyncTable(join(dir, `full-${round}.db`));
      const full = await timeCalls(() => baseline.record());
      baseline.close();
      const ledger = new UsageLedger(join(dir, `ledger-${round}.db`), () => ({}));
      const deferred = await timeCalls(() => ledger.record(RECORD));
      await ledger.walSync.durable();
      const syncs = ledger.walSync.syncs;
      ledger.close();
      console.log(`round ${round}: fsync per record (baseline) ${describe(full)}`);
      console.log(`         the ledger (WAL synced off the loop, ${syncs} syncs) ${describe(deferred)}; p99 ${(pct(full, 99) / pct(deferred, 99)).toFixed(0)}x lower, p50 ${(pct(full, 50) / pct(deferred, 50)).toFixed(1)}x; load ${load()}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
