import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DeferredWalSync } from '../fs/deferred-wal-sync.js';
import { costOf, type ModelPrice, type TokenCounts } from './prices.js';

/** One request's usage, as recorded. */
export interface UsageRecord extends TokenCounts {
  /** `model` (a turn's request, compaction included), `embedding` or `rerank`. */
  kind: 'model' | 'embedding' | 'rerank';
  provider: string;
  model: string;
  sessionId?: string;
  turnId?: string;
  /** Counted here with the kernel's tokenizer, not reported by the server (an embedder that reports none). */
  estimated?: boolean;
}

export type UsageGrouping = 'day' | 'session' | 'model';

export interface UsageRow extends TokenCounts {
  key: string;
  requests: number;
  /** USD, or null when some of it was at an unknown price. */
  cost: number | null;
  /** Tokens at an unknown price (usage.prices has no entry for their model). */
  unpricedTokens: number;
}

export interface UsageScope {
  /** Only usage of this kind (budgets count the agent's model requests). */
  kind?: UsageRecord['kind'];
  sessionId?: string;
  turnId?: string;
  /** ISO time, inclusive. */
  since?: string;
  until?: string;
}

const GROUP_COLUMN: Record<UsageGrouping, string> = { day: 'substr(at, 1, 10)', session: "coalesce(session_id, '(none)')", model: "provider || '/' || model" };

/**
 * Every model and embedding request's usage, per workspace (`.quire/usage.db`), durable across restarts.
 * A record is recorded once record returns: a crash of the kernel keeps it. It reaches the disk itself
 * within about 200 ms, synced off the event loop (DeferredWalSync): every embedding call records one,
 * queries included, and an fsync per record held every other request for up to 185 ms. Prices are
 * applied when read, from the current table, so a price added later prices the past too.
 */
export class UsageLedger {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  /** Syncs the WAL a little after records (see the class comment). */
  readonly walSync: DeferredWalSync;

  /** `onSyncError`: a failed sync of the WAL (the records stay recorded; their durability is in doubt). */
  constructor(file: string, private readonly prices: () => Readonly<Record<string, ModelPrice>>, onSyncError?: (error: unknown) => void) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.walSync = new DeferredWalSync(`${file}-wal`, 200, onSyncError);
    this.db.exec(`CREATE TABLE IF NOT EXISTS usage (
      id INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
      session_id TEXT, turn_id TEXT, input INTEGER NOT NULL, cached_input INTEGER NOT NULL, output INTEGER NOT NULL,
      reasoning INTEGER NOT NULL, estimated INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS usage_at ON usage (at);
      CREATE INDEX IF NOT EXISTS usage_session ON usage (session_id, turn_id);`);
    this.insert = this.db.prepare(`INSERT INTO usage (at, kind, provider, model, session_id, turn_id, input, cached_input, output, reasoning, estimated)
      VALUES (@at, @kind, @provider, @model, @sessionId, @turnId, @input, @cachedInput, @output, @reasoning, @estimated)`);
  }

  record(record: UsageRecord, at = new Date()): void {
    this.insert.run({
      at: at.toISOString(), kind: record.kind, provider: record.provider, model: record.model,
      sessionId: record.sessionId ?? null, turnId: record.turnId ?? null,
      input: clean(record.input), cachedInput: clean(record.cachedInput), output: clean(record.output), reasoning: clean(record.reasoning),
      estimated: record.estimated ? 1 : 0,
    });
    this.walSync.committed();
  }

  /** Sums by day, session or model within a scope, newest key first, at most `limit` rows. */
  report(by: UsageGrouping, scope: UsageScope = {}, limit = 1_000): UsageRow[] {
    const { where, params } = whereOf(scope);
    const rows = this.db.prepare(`SELECT ${GROUP_COLUMN[by]} AS key, model, count(*) AS requests, sum(input) AS input, sum(cached_input) AS cachedInput,
      sum(output) AS output, sum(reasoning) AS reasoning FROM usage ${where} GROUP BY key, model ORDER BY key DESC`).all(...params) as (TokenCounts & { key: string; model: string; requests: number })[];
    const out = new Map<string, UsageRow>();
    for (const row of rows) {
      const total = out.get(row.key) ?? { key: row.key, requests: 0, input: 0, cachedInput: 0, output: 0, reasoning: 0, cost: 0, unpricedTokens: 0 };
      const cost = costOf(row, this.prices()[row.model]);
      total.requests += row.requests;
      total.input += row.input;
      total.cachedInput += row.cachedInput;
      total.output += row.output;
      total.reasoning += row.reasoning;
      if (cost === null) {
        total.unpricedTokens += row.input + row.output;
        total.cost = null;
      } else if (total.cost !== null) total.cost += cost;
      out.set(row.key, total);
    }
    return [...out.values()].slice(0, limit);
  }

  /** Everything within a scope as one row (tokens, cost or null). */
  total(scope: UsageScope): UsageRow {
    const rows = this.report('model', scope);
    const sum: UsageRow = { key: 'total', requests: 0, input: 0, cachedInput: 0, output: 0, reasoning: 0, cost: 0, unpricedTokens: 0 };
    for (const row of rows) {
      sum.requests += row.requests;
      sum.input += row.input;
      sum.cachedInput += row.cachedInput;
      sum.output += row.output;
      sum.reasoning += row.reasoning;
      sum.unpricedTokens += row.unpricedTokens;
      sum.cost = sum.cost === null || row.cost === null ? null : sum.cost + row.cost;
    }
    return sum;
  }

  close(): void {
    this.walSync.close();
    this.db.close();
  }
}

function clean(value: number): number {
  return Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

function whereOf(scope: UsageScope): { where: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  if (scope.kind !== undefined) { clauses.push('kind = ?'); params.push(scope.kind); }
  if (scope.sessionId !== undefined) { clauses.push('session_id = ?'); params.push(scope.sessionId); }
  if (scope.turnId !== undefined) { clauses.push('turn_id = ?'); params.push(scope.turnId); }
  if (scope.since !== undefined) { clauses.push('at >= ?'); params.push(scope.since); }
  if (scope.until !== undefined) { clauses.push('at < ?'); params.push(scope.until); }
  return { where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', params };
}
