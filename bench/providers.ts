/**
 * Provider figures (issue 7), per provider, against the loopback fake that speaks its wire format:
 *  - latency: from the fake's last byte to the turn's `done` event (the SDK's parsing of the tail, the
 *    turn loop's bookkeeping and the session save), over BENCH_TURNS turns;
 *  - CPU per 1,000 streamed deltas, for a 10,000-delta answer: the whole process during a kernel turn,
 *    against two baselines run in the same process: reading the same stream with plain fetch (the fake
 *    and HTTP), and iterating it through the provider alone (SDK + normalisation). The kernel's own
 *    share is turn − provider. Medians of BENCH_REPEATS interleaved runs after one warm-up of each.
 *
 *   npm run build && node dist/bench/providers.js
 */
import { newId } from '../core/ids.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import { turnDependencies } from '../core/turn/kernel-turns.js';
import { MODEL_PROVIDER } from '../core/turn/model-provider-token.js';
import type { ModelProvider } from '../core/turn/model-provider.js';
import { runTurn } from '../core/turn/turn-loop.js';
import { ModelWireServer } from '../fakes/model-wire-server.js';
import { framesFor, type WireProtocol } from '../fakes/wire-frames.js';
import { createBenchWorkspace } from './bench-workspace.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 50);
const DELTAS = Number(process.env.BENCH_DELTAS ?? 10_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);
const PROTOCOLS: WireProtocol[] = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];
const KEY_ENV = 'QUIRE_BENCH_MODEL_KEY';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

async function bench(protocol: WireProtocol): Promise<void> {
  const fake = await ModelWireServer.start(['bench-model']);
  const workspace = await createBenchWorkspace();
  const base = workspace.config as KernelConfigFile;
  const config: KernelConfigFile = {
    ...base,
    plugins: { ...base.plugins, blocks: { config: { watch: false, welcome: false } }, providers: { config: { model: { provider: protocol, model: 'bench-model', baseURL: protocol.startsWith('openai') ? `${fake.url}/v1` : fake.url, apiKeyEnv: KEY_ENV } } } },
  };
  const kernel = await Kernel.boot({ workspace: workspace.root, config, logger: silentLogger });
  try {
    const provider = kernel.container.resolve<ModelProvider>(MODEL_PROVIDER);
    const deps = turnDependencies(kernel, { requireSnapshot: false });
    const turn = async (onDone: () => void) => {
      const sessionId = newId();
      await kernel.sessions.save({ id: sessionId, entries: [] });
      await runTurn(deps, { sessionId, message: 'go', provider, systemPrompt: () => 'bench', signal: new AbortController().signal }, (event) => { if (event.type === 'done') onDone(); });
    };

    const tails: number[] = [];
    for (let i = 0; i < TURNS + 5; i++) {
      fake.reply({ kind: 'sse', frames: framesFor(protocol, { text: 'a short answer of a few words', usage: { input: 10, output: 8 } }) });
      let doneAt = 0n;
      await turn(() => { doneAt = process.hrtime.bigint(); });
      const lastByte = fake.posts.at(-1)!.finishedAt!;
      if (i >= 5) tails.push(Number(doneAt - lastByte) / 1e6);
    }

    const deltas = Array.from({ length: DELTAS }, (_, i) => `w${i} `);
    const frames = framesFor(protocol, { text: deltas.join(''), deltas, usage: { input: 10, output: DELTAS } });
    const path = protocol === 'gemini' ? `/v1beta/models/bench-model:streamGenerateContent?alt=sse` : protocol === 'anthropic' ? '/v1/messages' : protocol === 'openai-chat' ? '/v1/chat/completions' : '/v1/responses';

    const measure = async (work: () => Promise<void>) => {
      fake.reply({ kind: 'sse', frames });
      const from = process.cpuUsage();
      await work();
      return cpuMs(from);
    };
    const readOnly = async () => {
      const response = await fetch(`${fake.url}${path}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      for await (const _chunk of response.body!) { /* read only */ }
    };
    const providerAlone = async () => {
      for await (const _event of provider.stream({ messages: [{ role: 'user', content: 'go' }], tools: [] }, new AbortController().signal)) { /* provider only */ }
    };
    const kernelTurn = () => turn(() => undefined);
    // One warm-up of each, then interleaved repeats; medians, so JIT warm-up and GC land evenly.
    for (const work of [readOnly, providerAlone, kernelTurn]) await measure(work);
    const samples: Record<'fetch' | 'provider' | 'turn', number[]> = { fetch: [], provider: [], turn: [] };
    for (let r = 0; r < REPEATS; r++) {
      samples.fetch.push(await measure(readOnly));
      samples.provider.push(await measure(providerAlone));
      samples.turn.push(await measure(kernelTurn));
    }
    const fetchOnly = percentile(samples.fetch, 50);
    const providerOnly = percentile(samples.provider, 50);
    const wholeTurn = percentile(samples.turn, 50);

    const per = (ms: number) => (ms / DELTAS) * 1000;
    console.log(`${protocol.padEnd(17)} last byte → done: p50 ${percentile(tails, 50).toFixed(2)} ms, p99 ${percentile(tails, 99).toFixed(2)} ms (${TURNS} turns)`);
    console.log(`${''.padEnd(17)} CPU per 1,000 deltas: fetch only ${per(fetchOnly).toFixed(1)} ms, SDK + provider ${per(providerOnly).toFixed(1)} ms, whole turn ${per(wholeTurn).toFixed(1)} ms; kernel's share (turn − provider) ${per(wholeTurn - providerOnly).toFixed(1)} ms, turn/provider ${(wholeTurn / providerOnly).toFixed(2)}×`);
  } finally {
    await kernel.close();
    await fake.close();
  }
}

async function main(): Promise<void> {
  process.env[KEY_ENV] = 'bench-key';
  for (const protocol of PROTOCOLS) await bench(protocol);
}

await main();
