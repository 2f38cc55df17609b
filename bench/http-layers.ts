/**
 * Where the action route's cost goes (issue 14 point 6): server CPU per request, read from /proc so that
 * a load generator starved of CPU does not skew it, for each layer of the kernel's HTTP path, each
 * served by its own process (bench/http-layers-server.js), measured in alternating rounds:
 *   bare                   a Hono route answering the same JSON, nothing else
 *   bare-async             the same route written as an async handler (what any route that awaits pays)
 *   guards                 + the kernel's request guard (Host/Origin, body limit, bearer auth)
 *   guards+body            + reading the JSON body
 *   guards+body+pipeline   + the action pipeline (lookup, validation, role check, scope, time limit)
 *   full                   the kernel's own server (startHttpServer), POST /api/actions/bench/bench/noop
 * "capacity vs bare" is bare's CPU per request ÷ this layer's: the share of the bare route's
 * throughput this layer keeps when the server is CPU-bound. Requests per second are printed beside it.
 *
 *   npm run build && node dist/bench/http-layers.js
 * Environment: ROUNDS (3), SECONDS_PER (4), CONNECTIONS (16), LAYERS (comma list),
 *   NODES: extra Node versions as `label=/path/to/node@/path/to/project` (the project built and its
 *   native modules built for that Node), comma-separated; BASELINE: `label@/path/to/other/checkout`
 *   adds that checkout's bare and full layers (an earlier commit, to compare in the same run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS_PER = Number(process.env.SECONDS_PER ?? 4);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 16);
const ALL_LAYERS = ['bare', 'bare-async', 'guards', 'guards+body', 'guards+body+pipeline', 'full'];
const LAYERS = process.env.LAYERS ? process.env.LAYERS.split(',') : ALL_LAYERS;
const here = fileURLToPath(new URL('.', import.meta.url));
const projectDir = join(here, '..', '..');

interface Runtime { label: string; node: string; project: string }
interface Target { name: string; runtime: string; layer: string; url: string; token: string; workspace: string; child: ChildProcess; cpu: number[]; rps: number[] }

const runtimes: Runtime[] = [{ label: `node ${process.versions.node.split('.')[0]}`, node: process.execPath, project: projectDir }];
for (const spec of (process.env.NODES ?? '').split(',').filter(Boolean)) {
  const [label, rest] = spec.split('=') as [string, string];
  const [node, project] = rest.split('@') as [string, string];
  runtimes.push({ label, node, project });
}
const baseline = process.env.BASELINE?.split('@') as [string, string] | undefined;

const uptime = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');
const cpuTicks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function start(runtime: string, node: string, project: string, layer: string): Promise<Target> {
  const child = spawn(node, [join(project, 'dist/bench/http-layers-server.js'), layer], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const info = JSON.parse(line.toString()) as { url: string; token: string; workspace: string };
  return { name: `${runtime} ${layer}`, runtime, layer, ...info, child, cpu: [], rps: [] };
}

async function measure(target: Target): Promise<{ cpuUs: number; rps: number }> {
  const before = cpuTicks(target.child.pid!);
  const result = await autocannon({
    url: target.url, method: 'POST', connections: CONNECTIONS, duration: SECONDS_PER,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' }, body: '{}',
  });
  if (result.errors + result.non2xx > 0) console.error(`${target.name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  // Clock ticks are 10 ms.
  return { cpuUs: ((cpuTicks(target.child.pid!) - before) * 10_000) / Math.max(1, result.requests.total), rps: result.requests.average };
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  try {
    for (const runtime of runtimes) for (const layer of LAYERS) targets.push(await start(runtime.label, runtime.node, runtime.project, layer));
    if (baseline) for (const layer of ['bare', 'full']) targets.push(await start(`${baseline[0]}`, process.execPath, baseline[1], layer));
    console.log(`HTTP layers: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS_PER} s per layer; load at start ${uptime()}`);
    for (const target of targets) await measure(target); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        const { cpuUs, rps } = await measure(target);
        target.cpu.push(cpuUs);
        target.rps.push(rps);
      }
      console.log(`round ${round + 1} done, load ${uptime()}`);
    }
    console.log('\n| runtime | layer | server CPU µs/request (median) | added by this layer µs | capacity vs bare (bare CPU ÷ this) | req/s (median) | req/s vs bare |');
    console.log('|---|---|---|---|---|---|---|');
    for (const target of targets) {
      const bare = targets.find((other) => other.runtime === target.runtime && other.layer === 'bare')!;
      const previous = targets[targets.indexOf(target) - 1];
      const added = target.layer === 'bare' || !previous || previous.runtime !== target.runtime ? '-' : (median(target.cpu) - median(previous.cpu)).toFixed(1);
      // Ratios per round (bare and this layer measured close together), then their median.
      const capacity = median(target.cpu.map((cpu, index) => bare.cpu[index]! / cpu));
      const rpsRatio = median(target.rps.map((rps, index) => rps / bare.rps[index]!));
      console.log(`| ${target.runtime} | ${target.layer} | ${median(target.cpu).toFixed(1)} | ${added} | ${(capacity * 100).toFixed(1)}% | ${Math.round(median(target.rps))} | ${(rpsRatio * 100).toFixed(1)}% |`);
    }
    console.log(`\nload at end ${uptime()}`);
  } finally {
    for (const target of targets) target.child.kill('SIGTERM');
    await Promise.all(targets.map((target) => once(target.child, 'exit').catch(() => undefined)));
    for (const target of targets) await rm(target.workspace, { recursive: true, force: true });
  }
}

await main();
