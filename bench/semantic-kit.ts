/**
 * What the semantic benches (semantic-indexer.ts, semantic-start.ts) share: a loopback OpenAI-compatible
 * /embeddings server in a child process (384-d vectors of character trigrams, normalised, so that texts
 * sharing words are near; well under a millisecond a text, its CPU off the kernel's event loop), the
 * config that boots the kernel through it, and the queries both time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import type { PluginSettings } from '../core/config/kernel-config.js';
import type { Kernel } from '../core/kernel.js';
import type { Principal } from '../core/plugin-api.js';

const ADMIN: Principal = { kind: 'person', name: 'bench', role: 'admin' };

export const pct = (values: number[], p: number): number => values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
export const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');

/** An action called as an admin person, in process; a confirmation asked for is an error here. */
export async function call<T>(kernel: Kernel, target: string, input: Record<string, unknown>): Promise<T> {
  const outcome = await kernel.pipeline.call({ target, input, principal: ADMIN });
  if (outcome.status !== 'ok') throw new Error(`${target} asked for a confirmation`);
  return outcome.value as T;
}

/** `count` queries of three lower-case words, each from one of `texts` (spread by a prime stride). */
export function threeWordQueries(texts: readonly string[], count: number): string[] {
  return Array.from({ length: count }, (_, i) => (texts[(i * 7919) % texts.length] ?? '').split(/\s+/).filter((word) => /^[a-z]+$/.test(word)).slice(1, 4).join(' ') || 'note');
}

/** search_hybrid, then each arm alone, end to end in process after 5 queries to warm up: one line each, `prefix` first. */
export async function timeSearches(kernel: Kernel, queries: readonly string[], prefix: string): Promise<void> {
  for (const [name, target] of [['hybrid', 'search_hybrid'], ['full text', 'search_fulltext'], ['semantic', 'search_semantic']] as const) {
    for (const query of queries.slice(0, 5)) await call(kernel, target, { query });
    const times: number[] = [];
    for (const query of queries) {
      const t = process.hrtime.bigint();
      await call(kernel, target, { query });
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    console.log(`${prefix}${name}, ${queries.length} queries of three words, in process: p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms; load ${load()}`);
  }
}

const FAKE = `
const { createServer } = require('node:http');
function vec(text) {
  const out = new Float32Array(384); const p = '  ' + text.toLowerCase() + '  ';
  for (let i = 0; i + 3 <= p.length; i++) { let h = 2166136261; for (let j = i; j < i + 3; j++) { h ^= p.charCodeAt(j); h = Math.imul(h, 16777619) >>> 0; } out[h % 384] += 1; }
  let n = 0; for (const x of out) n += x * x; n = Math.sqrt(n) || 1; return Array.from(out, (x) => x / n);
}
const server = createServer(async (req, res) => {
  let body = ''; for await (const c of req) body += c;
  const j = JSON.parse(body); const input = typeof j.input === 'string' ? [j.input] : j.input;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', model: j.model, data: input.map((t, index) => ({ object: 'embedding', index, embedding: vec(t) })) }));
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));`;

export async function startFakeEmbedder(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-e', FAKE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.on('data', (chunk: Buffer) => { const m = /port (\d+)/.exec(chunk.toString()); if (m) resolve(m[1]!); }));
  return { child, url: `http://127.0.0.1:${port}/v1` };
}

/** quire.json's plugins section that the benches boot with: search-semantic through `providers` and this fake. */
export function semanticPlugins(fakeUrl: string, semantic = true): Record<string, PluginSettings> {
  return {
    blocks: { config: { watch: false, welcome: false } },
    providers: { config: { embedder: { provider: 'openai', model: 'fake-384', baseURL: fakeUrl, apiKeyEnv: false } } },
    'search-semantic': semantic ? { config: { embedder: 'providers' } } : { enabled: false },
  };
}
