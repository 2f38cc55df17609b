/**
 * Over HTTP on loopback: requests per second of the no-op read action through
 * POST /api/actions/bench/bench/noop (host guard, body limit, bearer auth, the whole pipeline) against a
 * bare Hono route returning the same JSON, in one run. The servers run in a child process, the load
 * generator (autocannon) in this one. Target: the pipeline keeps at least 70% of the bare route.
 * Run: npm run build && node dist/bench/http-throughput.js
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = 3;

interface Endpoints { pipelineUrl: string; bareUrl: string; token: string; workspace: string }

async function startServers(): Promise<{ endpoints: Endpoints; stop: () => void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./http-server.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { endpoints: JSON.parse(line.toString()) as Endpoints, stop: () => child.kill('SIGTERM') };
}

async function measure(url: string, token: string): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({
    url, method: 'POST', connections: CONNECTIONS, duration: DURATION,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
  });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function main(): Promise<void> {
  const { endpoints, stop } = await startServers();
  try {
    await measure(endpoints.bareUrl, endpoints.token);
    await measure(endpoints.pipelineUrl, endpoints.token);
    const bare: number[] = [];
    const pipeline: number[] = [];
    let errors = 0;
    let p99 = { bare: 0, pipeline: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const b = await measure(endpoints.bareUrl, endpoints.token);
      const p = await measure(endpoints.pipelineUrl, endpoints.token);
      bare.push(b.rps);
      pipeline.push(p.rps);
      errors += b.errors + p.errors;
      p99 = { bare: Math.max(p99.bare, b.p99), pipeline: Math.max(p99.pipeline, p.p99) };
    }
    const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
    const ratio = sum(pipeline) / sum(bare);
    console.log(`HTTP throughput on loopback, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s, node ${process.version}`);
    console.log(`  bare Hono route              ${Math.round(sum(bare) / ROUNDS).toLocaleString('en')} req/s  (rounds: ${bare.map(Math.round).join(', ')}; worst p99 ${p99.bare} ms)`);
    console.log(`  POST /api/actions/... (full) ${Math.round(sum(pipeline) / ROUNDS).toLocaleString('en')} req/s  (rounds: ${pipeline.map(Math.round).join(', ')}; worst p99 ${p99.pipeline} ms)`);
    console.log(`  pipeline keeps ${(ratio * 100).toFixed(1)}% of the bare route (target ≥ 70%): ${ratio >= 0.7 ? 'met' : 'NOT met'}; errors or non-2xx: ${errors}`);
  } finally {
    stop();
    await rm(endpoints.workspace, { recursive: true, force: true });
  }
}

await main();
