/**
 * Agent core figure (issue 5): the turn loop's own cost per tool round, with a scripted model and a
 * no-op tool (everything but the model), for a 1-round and a 100-round turn, against a baseline of
 * calling the same tool through the pipeline directly.
 *
 *   node dist/bench/turn-loop.js
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import { newId } from '../core/ids.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { turnDependencies } from '../core/turn/kernel-turns.js';
import type { ModelEvent, ModelProvider } from '../core/turn/model-provider.js';
import { runTurn } from '../core/turn/turn-loop.js';
import { createBenchWorkspace } from './bench-workspace.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 20);

function provider(rounds: number): ModelProvider {
  let request = 0;
  return {
    id: 'scripted',
    async *stream(): AsyncGenerator<ModelEvent> {
      request++;
      if (request <= rounds) {
        yield { type: 'tool_call_start', index: 0, id: `c${request}`, name: 'bench_noop' };
        yield { type: 'tool_call_delta', index: 0, argumentsDelta: '{}' };
        yield { type: 'tool_call_end', index: 0 };
        yield { type: 'finish', reason: 'tool_calls' };
        return;
      }
      yield { type: 'text', delta: 'done' };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

async function main(): Promise<void> {
  const workspace = await createBenchWorkspace();
  const config = { ...(workspace.config as KernelConfigFile), plugins: { ...(workspace.config as KernelConfigFile).plugins, blocks: { config: { watch: false, welcome: false } } } };
  const kernel = await Kernel.boot({ workspace: workspace.root, config, logger: silentLogger });
  const deps = turnDependencies(kernel, { requireSnapshot: false, maxToolRounds: 200 });
  try {
    const person = { kind: 'person' as const, name: 'bench', role: 'admin' as const };
    const baselineStart = process.hrtime.bigint();
    for (let i = 0; i < 1000; i++) await kernel.pipeline.call({ target: 'bench_noop', input: {}, principal: person });
    const baselineMs = Number(process.hrtime.bigint() - baselineStart) / 1e6 / 1000;
    for (const rounds of [1, 100]) {
      const perRound: number[] = [];
      const perTurn: number[] = [];
      for (let t = 0; t < (rounds === 1 ? TURNS * 5 : TURNS); t++) {
        const sessionId = newId();
        await kernel.sessions.save({ id: sessionId, entries: [] });
        const started = process.hrtime.bigint();
        await runTurn(deps, { sessionId, message: 'go', provider: provider(rounds), systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        perTurn.push(ms);
        perRound.push(ms / (rounds + 1));
      }
      perTurn.sort((a, b) => a - b);
      perRound.sort((a, b) => a - b);
      console.log(`${String(rounds).padStart(3)}-round turn: p50 ${perTurn[Math.floor(perTurn.length / 2)]!.toFixed(1)} ms per turn, ${perRound[Math.floor(perRound.length / 2)]!.toFixed(2)} ms per model round`);
    }
    console.log(`  baseline, the no-op tool through the pipeline alone: ${(baselineMs * 1000).toFixed(1)} µs per call`);
  } finally {
    await kernel.close();
    await rm(join(workspace.root), { recursive: true, force: true });
  }
}

await main();
