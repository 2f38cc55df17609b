/**
 * Action pipeline overhead in process: calls per second of a no-op read action through the whole
 * pipeline (lookup, validation, role check, gate, action scope, time limit) against the same handler
 * called directly, in one run.  Run: npm run build && node dist/bench/pipeline-overhead.js
 */
import { rm } from 'node:fs/promises';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { ActionCall, Principal } from '../core/plugin-api.js';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import { createBenchWorkspace } from './bench-workspace.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const ROUNDS = 5;
const person: Principal = { kind: 'person', name: 'bench', role: 'admin' };
const agent: Principal = { kind: 'agent', name: 'agent:bench', role: 'admin' };

async function timeCalls(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await fn();
  return CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const workspace = await createBenchWorkspace();
  const kernel = await Kernel.boot({ workspace: workspace.root, config: workspace.config as KernelConfigFile, logger: silentLogger });
  const entry = kernel.registry.get('bench_noop');
  if (!entry) throw new Error('bench plugin did not register');
  const call: ActionCall = { callId: 'bench', principal: person, signal: new AbortController().signal, stopped: undefined, progress: () => undefined, log: silentLogger, deniedNotebooks: new Set(), readOnlyNotebooks: new Set(), returned: () => undefined };
  const direct = () => Promise.resolve(entry.handler({}, call));
  const viaPipeline = () => kernel.pipeline.call({ target: 'bench_noop', input: {}, principal: person });
  const viaAgent = () => kernel.pipeline.call({ target: 'bench_noop', input: {}, principal: agent });

  // Warm up the JIT on every path before measuring.
  for (const fn of [direct, viaPipeline, viaAgent]) for (let i = 0; i < 20_000; i++) await fn();
  const results = { direct: [] as number[], pipeline: [] as number[], agent: [] as number[] };
  // Rounds alternate so that drift in machine load affects every path alike.
  for (let round = 0; round < ROUNDS; round++) {
    results.direct.push(await timeCalls(direct));
    results.pipeline.push(await timeCalls(viaPipeline));
    results.agent.push(await timeCalls(viaAgent));
  }
  const d = median(results.direct);
  const p = median(results.pipeline);
  const a = median(results.agent);
  console.log(`pipeline overhead, no-op read action, ${CALLS} calls x ${ROUNDS} rounds (median), node ${process.version}`);
  console.log(`  handler called directly     ${Math.round(d).toLocaleString('en')} calls/s`);
  console.log(`  pipeline, person caller     ${Math.round(p).toLocaleString('en')} calls/s  (${(p / d * 100).toFixed(1)}% of direct, ${(1e6 / p - 1e6 / d).toFixed(2)} µs added per call)`);
  console.log(`  pipeline, agent caller+gate ${Math.round(a).toLocaleString('en')} calls/s  (${(a / d * 100).toFixed(1)}% of direct, ${(1e6 / a - 1e6 / d).toFixed(2)} µs added per call)`);
  await kernel.close();
  await rm(workspace.root, { recursive: true, force: true });
}

await main();
