/**
 * What a long turn's checkpoints cost (runtime.json and its journal): a scripted model makes ROUNDS
 * rounds of CALLS calls, each reading one document of the realistic corpus (`../shared/bench/corpus.mjs`:
 * 100 blocks of about 400 characters, so near the 40,000 characters a tool result is cut at). Every call
 * is checkpointed twice (started, finished), so a turn holding all its results in one file rewritten at
 * each checkpoint writes the square of its length. Prints the turn's time, the bytes the process wrote
 * (`/proc/self/io` wchar) against the bytes of the results themselves (the baseline: writing each result
 * once), and the time of the last rounds against the first ones (1.0 when a round's cost does not grow).
 *
 *   node /work/shared/bench/corpus.mjs /tmp/turn-corpus 4000 1
 *   CORPUS=/tmp/turn-corpus ROUNDS=25 CALLS=10 node dist/bench/turn-runtime.js
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KernelConfigFile } from '../core/config/kernel-config.js';
import { newId } from '../core/ids.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import { turnDependencies } from '../core/turn/kernel-turns.js';
import type { ModelEvent, ModelProvider } from '../core/turn/model-provider.js';
import { runTurn } from '../core/turn/turn-loop.js';
import { createBenchWorkspace } from './bench-workspace.js';

const ROUNDS = Number(process.env.ROUNDS ?? 25);
const CALLS = Number(process.env.CALLS ?? 10);
const CORPUS = process.env.CORPUS ?? '/tmp/turn-corpus';

function documents(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) found.push(readFileSync(join(dir, entry.name), 'utf8'));
    }
  };
  walk(folder);
  if (found.length === 0) throw new Error(`no documents in ${folder}: run node /work/shared/bench/corpus.mjs ${folder} 4000 1 first`);
  return found;
}

function written(): number {
  const line = readFileSync('/proc/self/io', 'utf8').split('\n').find((each) => each.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

/** A model that calls `benchdocs_read` CALLS times a round for ROUNDS rounds, then answers; it notes when each round was asked. */
function provider(asked: number[]): ModelProvider {
  let request = 0;
  return {
    id: 'scripted',
    async *stream(): AsyncGenerator<ModelEvent> {
      asked.push(performance.now());
      request++;
      if (request <= ROUNDS) {
        for (let call = 0; call < CALLS; call++) {
          yield { type: 'tool_call_start', index: call, id: `c${request}_${call}`, name: 'benchdocs_read' };
          yield { type: 'tool_call_delta', index: call, argumentsDelta: JSON.stringify({ n: request * CALLS + call }) };
          yield { type: 'tool_call_end', index: call };
        }
        yield { type: 'finish', reason: 'tool_calls' };
        return;
      }
      yield { type: 'text', delta: 'done' };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

async function main(): Promise<void> {
  const docs = documents(CORPUS);
  const workspace = await createBenchWorkspace();
  const folder = join(workspace.root, 'plugins', 'benchdocs');
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'docs.json'), JSON.stringify(docs));
  await writeFile(join(folder, 'manifest.json'), JSON.stringify({
    id: 'benchdocs', version: '1.0.0', kernel: '^0.1.0', description: 'benchmark documents', entry: 'index.js',
    tools: [{ name: 'benchdocs', description: 'benchmark documents', actions: {
      read: { description: 'one document of the corpus', input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false }, effects: [] },
    } }],
  }));
  await writeFile(join(folder, 'index.js'), [
    "import { readFileSync } from 'node:fs';",
    "const docs = JSON.parse(readFileSync(new URL('./docs.json', import.meta.url), 'utf8'));",
    'export default { activate() { return { benchdocs: { read: ({ n }) => docs[n % docs.length] } }; } };',
  ].join('\n'));
  const base = workspace.config as KernelConfigFile;
  const config = { ...base, plugins: { ...base.plugins, benchdocs: { trusted: true }, blocks: { config: { watch: false, welcome: false } } } };
  const kernel = await Kernel.boot({ workspace: workspace.root, config, logger: silentLogger });
  const deps = turnDependencies(kernel, { requireSnapshot: false, maxToolRounds: ROUNDS + 5 });
  try {
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    const asked: number[] = [];
    const bytesBefore = written();
    const started = performance.now();
    const outcome = await runTurn(deps, { sessionId, message: 'read them all', provider: provider(asked), systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
    const turnMs = performance.now() - started;
    const bytes = written() - bytesBefore;
    const session = await kernel.sessions.readStored(sessionId);
    const results = session.entries.flatMap((entry) => entry.toolCalls ?? []).reduce((sum, call) => sum + Buffer.byteLength(call.result ?? ''), 0);
    const rounds = asked.slice(1).map((at, i) => at - asked[i]!);
    const span = Math.max(1, Math.min(5, Math.floor(rounds.length / 2)));
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    const first = mean(rounds.slice(0, span));
    const last = mean(rounds.slice(-span));
    console.log(`turn of ${ROUNDS} rounds x ${CALLS} calls (${outcome.state}), ${docs.length} documents of ${Math.round(mean(docs.map((doc) => doc.length)))} characters on average`);
    console.log(`  turn: ${(turnMs / 1000).toFixed(2)} s; a round: first ${span} ${first.toFixed(1)} ms, last ${span} ${last.toFixed(1)} ms (ratio ${(last / first).toFixed(2)})`);
    console.log(`  written by the process: ${(bytes / 2 ** 20).toFixed(1)} MiB; the results themselves: ${(results / 2 ** 20).toFixed(1)} MiB (ratio ${(bytes / Math.max(1, results)).toFixed(1)})`);
  } finally {
    await kernel.close();
    await rm(workspace.root, { recursive: true, force: true });
  }
}

await main();
