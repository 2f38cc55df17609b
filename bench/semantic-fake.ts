/**
 * A loopback OpenAI-compatible /embeddings server in a child process, for the semantic benches: 384-d
 * vectors of character trigrams (normalised), so that texts sharing words are near. It answers in well
 * under a millisecond a text; the child keeps its CPU off the kernel's event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { PluginSettings } from '../core/config/kernel-config.js';

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
