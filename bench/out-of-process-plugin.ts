/**
 * What running a plugin in a process of its own costs per call: the same user plugin loaded twice,
 * once trusted (in the kernel's process) and once untrusted (its own process, IPC, sandbox), called
 * in one run, rounds alternating. Two figures each: the registry's handler alone (the process boundary
 * itself) with a small and a 64 KB answer, and the whole pipeline, both actions declaring
 * `externalCost` so that both are gated and audited alike. Prints p50/p99 per call and the machine load.
 * Run: npm run build && node dist/bench/out-of-process-plugin.js   (BENCH_CALLS=2000 by default)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { ActionCall, Principal } from '../core/plugin-api.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = 4;
const person: Principal = { kind: 'person', name: 'bench', role: 'admin' };

/** The same plugin under two ids: `oop-in` (trusted, in-process) and `oop-out` (untrusted, own process). */
async function writePlugins(root: string): Promise<void> {
  for (const id of ['oop-in', 'oop-out']) {
    const tool = id.replace('-', '_');
    const folder = join(root, 'plugins', id);
    await mkdir(folder, { recursive: true });
    const input = { type: 'object', properties: { large: { type: 'boolean' } }, additionalProperties: false };
    await writeFile(join(folder, 'manifest.json'), JSON.stringify({
      id, version: '1.0.0', kernel: '^0.1.0', description: 'benchmark plugin', entry: 'index.js',
      tools: [{ name: tool, description: 'benchmarks', actions: {
        echo: { description: 'answers a small or a 64 KB text', input, effects: [] },
        costly: { description: 'answers a small text; declares externalCost so that it is audited', input, effects: ['externalCost'] },
      } }],
    }));
    await writeFile(join(folder, 'index.js'), `const large = 'x'.repeat(64 * 1024);
export default { activate() { return { ${tool}: {
  echo: (input) => ({ text: input.large ? large : 'ok' }),
  costly: () => ({ text: 'ok' }),
} }; } };
`);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function sample(fn: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < CALLS; i++) {
    const start = process.hrtime.bigint();
    await fn();
    into.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
}

function describe(label: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `  ${label.padEnd(44)} p50 ${percentile(sorted, 0.5).toFixed(1).padStart(7)} µs   p99 ${percentile(sorted, 0.99).toFixed(1).padStart(8)} µs`;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-oop-'));
  await writePlugins(root);
  const kernel = await Kernel.boot({ workspace: root, config: { plugins: { 'oop-in': { trusted: true } } }, logger: silentLogger });
  try {
    const call: ActionCall = { callId: 'bench', principal: person, signal: new AbortController().signal, stopped: undefined, progress: () => undefined, log: silentLogger, deniedNotebooks: new Set(), readOnlyNotebooks: new Set(), returned: () => undefined };
    const paths: [string, () => Promise<unknown>][] = [];
    for (const [mode, id] of [['in-process', 'oop_in'], ['out-of-process', 'oop_out']] as const) {
      const echo = kernel.registry.get(`${id}_echo`);
      if (!echo) throw new Error(`${id} did not register`);
      paths.push([`${mode}: handler, small answer`, async () => echo.handler({ large: false }, call)]);
      paths.push([`${mode}: handler, 64 KB answer`, async () => echo.handler({ large: true }, call)]);
      paths.push([`${mode}: pipeline, audited action`, () => kernel.pipeline.call({ target: `${id}_costly`, input: {}, principal: person })]);
    }
    // Warm up every path (JIT, the child's JIT, the audit file) before measuring.
    for (const [, fn] of paths) for (let i = 0; i < 300; i++) await fn();
    const results = new Map<string, number[]>(paths.map(([label]) => [label, []]));
    // Rounds alternate so that drift in machine load affects every path alike.
    for (let round = 0; round < ROUNDS; round++) for (const [label, fn] of paths) await sample(fn, results.get(label)!);
    console.log(`plugin calls in-process vs in a process of their own, ${CALLS} calls x ${ROUNDS} rounds per path, node ${process.version}`);
    console.log(`  sandbox of the out-of-process plugin: ${JSON.stringify(kernel.plugins.processOf('oop-out')?.sandbox)}`);
    for (const [label, values] of results) console.log(describe(label, values));
    console.log(`  load: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  } finally {
    await kernel.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
