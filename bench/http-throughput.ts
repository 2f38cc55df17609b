/**
 * Over HTTP on loopback: requests per second of the no-op read action through
 * POST /api/actions/bench/bench/noop (host guard, body limit, bearer auth, the whole pipeline) against a
 * bare Hono route returning the same JSON, in one run. The servers run in a child process, the load
 * generator (autocannon) in this one, so requests per second also measure what the generator leaves the
 * server on this 2-core machine; the server's CPU per request (from /proc) is printed beside them.
 * Target (issue 14 point 6): the action route keeps at least 65% of the bare route.
 * Run: npm run build && node dist/bench/http-throughput.js   (bench/http-layers.ts splits the cost by layer)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = 3;

interface Endpoints { pipelineUrl: string; bareUrl: string; bareBodyUrl: string; token: string; workspace: string }

let serverPid = 0;
const uptime = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');
/** CPU ticks (10 ms) of the server process: both servers share it, and are measured one at a time. */
const cpuTicks = (): number => {
  const fields = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

async function startServers(): Promise<{ endpoints: Endpoints; stop: () => void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./http-server.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  serverPid = child.pid!;
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { endpoints: JSON.parse(line.toString()) as Endpoints, stop: () => child.kill('SIGTERM') };
}

async function measure(url: string, token: string): Promise<{ rps: number; errors: number; cpuUs: number }> {
  const before = cpuTicks();
  const result = await autocannon({
    url, method: 'POST', connections: CONNECTIONS, duration: DURATION,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
  });
  return { rps: result.requests.average, errors: result.errors + result.non2xx, cpuUs: ((cpuTicks() - before) * 10_000) / Math.max(1, result.requests.total) };
}

async function main(): Promise<void> {
  const { endpoints, stop } = await startServers();
  try {
    await measure(endpoints.bareUrl, endpoints.token);
    await measure(endpoints.pipelineUrl, endpoints.token);
    const bare: number[] = [];
    const bareBody: number[] = [];
    const pipeline: number[] = [];
    const cpu = new Map<number[], number[]>([[bare, []], [bareBody, []], [pipeline, []]]);
    let errors = 0;
    const loadAtStart = uptime();
    // Rounds alternate the three routes so that drift in machine load affects each alike.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [url, into] of [[endpoints.bareUrl, bare], [endpoints.bareBodyUrl, bareBody], [endpoints.pipelineUrl, pipeline]] as const) {
        const result = await measure(url, endpoints.token);
        into.push(result.rps);
        cpu.get(into)!.push(result.cpuUs);
        errors += result.errors;
      }
    }
    const mean = (values: number[]): number => values.reduce((total, value) => total + value, 0) / values.length;
    const line = (label: string, values: number[]): string => `  ${label.padEnd(40)} ${Math.round(mean(values)).toLocaleString('en').padStart(7)} req/s  (rounds: ${values.map(Math.round).join(', ')}), server CPU ${mean(cpu.get(values)!).toFixed(1)} µs/request`;
    const ratio = mean(pipeline) / mean(bare);
    console.log(`HTTP throughput on loopback, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s, node ${process.version}; load ${loadAtStart} at start, ${uptime()} at end`);
    console.log(line('bare Hono route', bare));
    console.log(line('bare Hono route that parses the body', bareBody));
    console.log(line('POST /api/actions/... (whole pipeline)', pipeline));
    const capacity = mean(cpu.get(bare)!) / mean(cpu.get(pipeline)!);
    console.log(`  pipeline keeps ${(ratio * 100).toFixed(1)}% of the bare route's req/s (target >= 65%: ${ratio >= 0.65 ? 'met' : 'NOT met'}), ${(mean(pipeline) / mean(bareBody) * 100).toFixed(1)}% of the body-parsing one; ${(capacity * 100).toFixed(1)}% of its capacity by server CPU per request; errors or non-2xx: ${errors}`);
  } finally {
    stop();
    await rm(endpoints.workspace, { recursive: true, force: true });
  }
}

await main();
