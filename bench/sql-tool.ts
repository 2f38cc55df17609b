/**
 * SQL tool figures (issue 4): the round trip of `select 1` through the pipeline and the warm child
 * process (against a direct better-sqlite3 call in this process as the baseline), and the time from a
 * statement's timeout until a fresh child answers.
 *
 *   node dist/bench/sql-tool.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { Principal } from '../core/plugin-api.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1_000);
const KILLS = Number(process.env.BENCH_KILLS ?? 10);
const person: Principal = { kind: 'person', name: 'bench', role: 'admin' };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-sql-'));
  const kernel = await Kernel.boot({ workspace: join(root, 'ws'), config: { plugins: { blocks: { config: { watch: false } } } }, logger: silentLogger });
  const call = async (input: Record<string, unknown>) => {
    const outcome = await kernel.pipeline.call({ target: 'sql_query', input, principal: person });
    return outcome.status === 'ok' ? outcome.value : undefined;
  };
  try {
    await call({ sql: 'SELECT 1' });
    const direct = new Database(join(kernel.workspace.indexDir, 'quire.db'), { readonly: true });
    const statement = direct.prepare('SELECT 1');
    const baseline: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = process.hrtime.bigint();
      statement.all();
      baseline.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    direct.close();
    const rounds: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = process.hrtime.bigint();
      await call({ sql: 'SELECT 1' });
      rounds.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const p50 = percentile(rounds, 0.5);
    console.log(`select 1, ${ROUNDS} times: through the pipeline and the child p50 ${p50.toFixed(3)} ms, p99 ${percentile(rounds, 0.99).toFixed(3)} ms`);
    console.log(`  baseline, better-sqlite3 in this process: p50 ${percentile(baseline, 0.5).toFixed(4)} ms (the tool costs ${(p50 / percentile(baseline, 0.5)).toFixed(0)}x, nearly all of it IPC)`);
    const recover: number[] = [];
    for (let i = 0; i < KILLS; i++) {
      const runaway = call({ sql: 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n', timeoutMs: 200 }).catch(() => undefined);
      await runaway;
      const started = process.hrtime.bigint();
      await call({ sql: 'SELECT 1' });
      recover.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    console.log(`after a timeout (200 ms limit), until a fresh child answers select 1, ${KILLS} times: p50 ${percentile(recover, 0.5).toFixed(1)} ms, max ${Math.max(...recover).toFixed(1)} ms`);
  } finally {
    await kernel.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
