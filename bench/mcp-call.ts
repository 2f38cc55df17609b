/**
 * MCP figure (issue 8): the round trip of `tools/call` for the no-op read action over /mcp on loopback
 * (the real SDK client, Streamable HTTP, a session), against a direct POST /api/actions/bench/bench/noop
 * in the same run, one request at a time. The server runs in a child process (bench/http-server.js),
 * so client and server do not share an event loop. Interleaved rounds after a warm-up; p50 and p99.
 * Target (issue 14 point 7): ≤ 1.3× at p50. A plain call is answered as JSON (core/mcp/session-transport.ts).
 *
 *   npm run build && node dist/bench/mcp-call.js   (BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>" profiles the server)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000);
const ROUNDS = 4;

interface Endpoints { pipelineUrl: string; token: string; workspace: string }

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timed(count: number, work: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await work();
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out;
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), fileURLToPath(new URL('./http-server.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const endpoints = JSON.parse(line.toString()) as Endpoints;
  const origin = new URL(endpoints.pipelineUrl).origin;
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${endpoints.token}` } } }));
  try {
    const viaMcp = async () => {
      const result = await client.callTool({ name: 'bench_noop', arguments: {} });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    };
    const direct = async () => {
      const response = await fetch(endpoints.pipelineUrl, { method: 'POST', headers: { authorization: `Bearer ${endpoints.token}`, 'content-type': 'application/json' }, body: '{}' });
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      await response.json();
    };
    await timed(500, viaMcp);
    await timed(500, direct);
    const mcp: number[] = [];
    const http: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      mcp.push(...await timed(CALLS / ROUNDS, viaMcp));
      http.push(...await timed(CALLS / ROUNDS, direct));
    }
    const show = (name: string, values: number[]) => `${name}: p50 ${percentile(values, 50).toFixed(3)} ms, p99 ${percentile(values, 99).toFixed(3)} ms`;
    console.log(`${CALLS} calls each, one at a time, loopback, node ${process.version}; load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
    console.log(show('tools/call over /mcp          ', mcp));
    console.log(show('POST /api/actions (baseline)  ', http));
    console.log(`ratio /mcp ÷ direct: p50 ${(percentile(mcp, 50) / percentile(http, 50)).toFixed(2)}×, p99 ${(percentile(mcp, 99) / percentile(http, 99)).toFixed(2)}×`);
  } finally {
    await client.close();
    child.kill('SIGTERM');
    await rm(endpoints.workspace, { recursive: true, force: true });
  }
}

await main();
