/**
 * Kills survived (issue 13's closing figure): `quire serve` SIGKILLed under concurrent writes, KILLS
 * times, each recovery checked against what was acknowledged and against a rebuild (bench/kill-cycle.ts).
 *   npm run build && node dist/bench/kill-writes.js   (env: KILLS=30 CLIENTS=20 DOCS=5 SEED=<n>;
 *   KEEP_KILLED=<folder> keeps a copy of each killed workspace, before its restart;
 *   QUIRE_CLI=<another build's dist/core/cli/main.js> kills that build instead)
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killCycles } from './kill-cycle.js';

const KILLS = Number(process.env.KILLS ?? 30);
const CLIENTS = Number(process.env.CLIENTS ?? 20);
const DOCS = Number(process.env.DOCS ?? 5);
const SEED = Number(process.env.SEED ?? Date.now() % 1_000_000);
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');

const folder = await mkdtemp(join(tmpdir(), 'quire-kills-'));
console.log(`${KILLS} kills of quire serve under ${CLIENTS} clients writing to ${DOCS} documents, seed ${SEED}, load ${load()}`);
try {
  const report = await killCycles({
    cli: process.env.QUIRE_CLI ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'core', 'cli', 'main.js'),
    folder, kills: KILLS, clients: CLIENTS, documents: DOCS, killAfterMs: [100, 1500], seed: SEED, progress: (line) => console.log(`  ${line}`),
    afterKill: process.env.KEEP_KILLED ? (workspace, kill) => cp(workspace, join(process.env.KEEP_KILLED!, `kill-${kill}`), { recursive: true }) : undefined,
  });
  const sorted = [...report.restartMs].sort((a, b) => a - b);
  console.log(`acknowledged before the kills: ${JSON.stringify(report.acknowledged)}; kills in the middle of an import: ${report.importsCut}`);
  console.log(`restart after a kill (recovery included): p50 ${sorted[sorted.length >> 1]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`);
  console.log(`kills survived: ${report.kills - new Set(report.failures.map((line) => /^kill (\d+)/.exec(line)?.[1] ?? line)).size} of ${report.kills}; load ${load()}`);
  for (const failure of report.failures) console.log(`  FAILED ${failure}`);
  if (report.failures.length > 0) process.exitCode = 1;
} finally {
  await rm(folder, { recursive: true, force: true });
}
