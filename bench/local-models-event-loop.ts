/**
 * What embedding does to the kernel's event loop (issue 15, local ONNX): batches of 32 corpus paragraphs
 * (~400 characters, every 25th Chinese) through the onnx embedder on the main thread and on its worker
 * thread, alternating A/B in one run. Per batch: wall time, the longest stall of a 1 ms timer (the event
 * loop held up), monitorEventLoopDelay's max; plus texts/s and a single short query's latency.
 *
 *   node /work/shared/bench/corpus.mjs /tmp/corpus 3200                        # paragraphs
 *   QUIRE_BENCH_MODELS=/tmp/bench-models npx vitest run test/plugins/local-models/bench-model.test.ts
 *   npm run build && node dist/bench/local-models-event-loop.js /tmp/bench-models bench/embedder-384 /tmp/corpus [ROUNDS=8] [bench/reranker-384]
 *
 * With a reranker: also one query against 40 paragraphs (what a hybrid search reranks), the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createModelRunner } from '../plugins/local-models/model-runner.js';
import { OnnxEmbedder } from '../plugins/local-models/onnx-embedder.js';
import { OnnxReranker } from '../plugins/local-models/onnx-reranker.js';

const [modelsDir, model, corpusDir, roundsArg, rerankerModel] = process.argv.slice(2);
if (!modelsDir || !model || !corpusDir) {
  console.error('usage: node dist/bench/local-models-event-loop.js <models dir> <org/name> <corpus dir> [rounds] [reranker org/name]');
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 8);
const BATCH = 32;

function paragraphs(dir: string, wanted: number): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= wanted) return;
      if (entry.isDirectory()) walk(join(folder, entry.name));
      else if (entry.name.endsWith('.md')) found.push(...readFileSync(join(folder, entry.name), 'utf8').split('\n\n').map((text) => text.trim()).filter((text) => text && !text.startsWith('#')));
    }
  };
  walk(dir);
  return found.slice(0, wanted);
}

const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
const median = (values: number[]): number => percentile(values, 50);

/** The longest gap between ticks of a 1 ms timer while `work` runs: how long the loop was held up. */
async function stall<T>(work: () => Promise<T>): Promise<{ ms: number; stallMs: number; histogramMaxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 5));
  histogram.reset();
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => { const at = performance.now(); longest = Math.max(longest, at - last); last = at; }, 1);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  // A stall at the very end is seen only by the next tick.
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  histogram.disable();
  return { ms, stallMs: longest, histogramMaxMs: histogram.max / 1e6 };
}

const texts = paragraphs(corpusDir, BATCH * ROUNDS);
const meanChars = texts.reduce((sum, text) => sum + text.length, 0) / texts.length;
// 'idle': the same timer while the main thread only waits as long as a worker batch takes: what the
// machine's load alone does to it. 'worker-all': onnxruntime on every core (the default leaves one free).
const placements = ['inline', 'worker', 'worker-all', 'idle'] as const;
type Placement = (typeof placements)[number];
const runnerFor = (placement: Placement) => createModelRunner({ kind: 'embedder', modelsDir, model, ...(placement === 'worker-all' ? { threads: availableParallelism() } : {}) }, placement === 'inline' ? 'inline' : 'worker');
const embedders = new Map(placements.filter((placement) => placement !== 'idle').map((placement) => [placement, new OnnxEmbedder({ model }, modelsDir, runnerFor(placement))]));
const figures = new Map(placements.map((placement) => [placement, { ms: [] as number[], stall: [] as number[], histogram: [] as number[], query: [] as number[], queryStall: [] as number[] }]));

console.log(`model ${model} (${embedders.get('inline')!.dimensions}-d), ${ROUNDS} rounds of ${BATCH} paragraphs (mean ${meanChars.toFixed(0)} chars), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const embedder of embedders.values()) await embedder.embed(texts.slice(0, 4)); // load + warm up
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
for (let round = 0; round < ROUNDS; round++) {
  const batch = texts.slice(round * BATCH, (round + 1) * BATCH);
  for (const placement of round % 2 === 0 ? placements : [...placements].reverse()) {
    const figure = figures.get(placement)!;
    if (placement === 'idle') {
      const waited = median(figures.get('worker')!.ms.length ? figures.get('worker')!.ms : [250]);
      const run = await stall(() => sleep(waited));
      figure.ms.push(run.ms); figure.stall.push(run.stallMs); figure.histogram.push(run.histogramMaxMs);
      const query = await stall(() => sleep(2));
      figure.query.push(query.ms); figure.queryStall.push(query.stallMs);
      continue;
    }
    const embedder = embedders.get(placement)!;
    const run = await stall(() => embedder.embed(batch));
    figure.ms.push(run.ms); figure.stall.push(run.stallMs); figure.histogram.push(run.histogramMaxMs);
    const query = await stall(() => embedder.embedQuery('semantic search over my notes'));
    figure.query.push(query.ms); figure.queryStall.push(query.stallMs);
  }
}
for (const placement of placements) {
  const figure = figures.get(placement)!;
  if (placement === 'idle') {
    console.log(`idle        the same timers, nothing running: longest stall median ${median(figure.stall).toFixed(1)} ms, max ${Math.max(...figure.stall).toFixed(1)} ms (the machine's load alone)`);
    continue;
  }
  console.log(`${placement.padEnd(10)}  batch of ${BATCH}: median ${median(figure.ms).toFixed(0)} ms (${(BATCH / (median(figure.ms) / 1000)).toFixed(0)} texts/s)` +
    `  event loop held up: median ${median(figure.stall).toFixed(1)} ms, max ${Math.max(...figure.stall).toFixed(1)} ms (monitorEventLoopDelay max ${median(figure.histogram).toFixed(1)} ms median)` +
    `  one query: median ${median(figure.query).toFixed(1)} ms, held up ${median(figure.queryStall).toFixed(1)} ms`);
}
const inline = figures.get('inline')!;
const worker = figures.get('worker')!;
console.log(`ratio worker/inline: batch time ${(median(worker.ms) / median(inline.ms)).toFixed(2)}, longest stall ${(median(worker.stall) / median(inline.stall)).toFixed(3)}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await Promise.all([...embedders.values()].map((embedder) => embedder.dispose()));

if (rerankerModel) {
  const DOCUMENTS = 40;
  const rerankers = new Map((['inline', 'worker'] as const).map((placement) => [placement, new OnnxReranker({ model: rerankerModel }, modelsDir, createModelRunner({ kind: 'reranker', modelsDir, model: rerankerModel }, placement))]));
  const timings = new Map([...rerankers.keys()].map((placement) => [placement, { ms: [] as number[], stall: [] as number[] }]));
  for (const reranker of rerankers.values()) await reranker.rerank('warm up', texts.slice(0, 2));
  for (let round = 0; round < ROUNDS; round++) {
    const documents = texts.slice((round * DOCUMENTS) % (texts.length - DOCUMENTS), (round * DOCUMENTS) % (texts.length - DOCUMENTS) + DOCUMENTS);
    for (const placement of round % 2 === 0 ? ['inline', 'worker'] as const : ['worker', 'inline'] as const) {
      const run = await stall(() => rerankers.get(placement)!.rerank('semantic search over my notes', documents));
      timings.get(placement)!.ms.push(run.ms);
      timings.get(placement)!.stall.push(run.stallMs);
    }
  }
  for (const [placement, timing] of timings) {
    console.log(`rerank ${placement.padEnd(6)} one query, ${DOCUMENTS} paragraphs (${rerankerModel}): median ${median(timing.ms).toFixed(0)} ms, event loop held up median ${median(timing.stall).toFixed(1)} ms, max ${Math.max(...timing.stall).toFixed(1)} ms`);
  }
  await Promise.all([...rerankers.values()].map((reranker) => reranker.dispose()));
  console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}
