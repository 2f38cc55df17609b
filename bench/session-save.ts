/**
 * Agent core figure (issue 5): saving a 500-entry session through the session store, p50 and p99,
 * against a baseline of writing the same document atomically without the store's checks.
 *
 *   node dist/bench/session-save.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../core/fs/atomic-write.js';
import { newId } from '../core/ids.js';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';

const SAVES = Number(process.env.BENCH_SAVES ?? 300);
const ENTRIES = 500;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function entries(): Record<string, unknown>[] {
  return Array.from({ length: ENTRIES }, (_, i) => i % 2 === 0
    ? { id: `u${i}`, type: 'user', content: `Question ${i}: ${'what about the notes on this topic? '.repeat(4)}` }
    : { id: `a${i}`, type: 'assistant', content: 'An answer that cites a few blocks and explains them. '.repeat(8),
      toolCalls: [{ id: `c${i}`, name: 'search_fulltext', arguments: { query: 'topic' }, state: 'finished', result: 'result text '.repeat(40) }] });
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-session-'));
  const kernel = await Kernel.boot({ workspace: join(root, 'ws'), config: { plugins: { blocks: { config: { watch: false } } } }, logger: silentLogger });
  try {
    const id = newId();
    const body = entries();
    let revision = (await kernel.sessions.save({ id, title: 'Bench', entries: body })).revision;
    const bytes = JSON.stringify({ entries: body }).length;
    const times: number[] = [];
    for (let i = 0; i < SAVES; i++) {
      const started = process.hrtime.bigint();
      revision = (await kernel.sessions.save({ id, entries: body, expectedRevision: revision })).revision;
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const baseline: number[] = [];
    for (let i = 0; i < SAVES; i++) {
      const started = process.hrtime.bigint();
      await writeJsonAtomic(join(root, 'baseline.json'), { id, entries: body, revision: i });
      baseline.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    console.log(`save of a ${ENTRIES}-entry session (${(bytes / 1024).toFixed(0)} KiB), ${SAVES} times: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms`);
    console.log(`  baseline, the same document written atomically: p50 ${percentile(baseline, 0.5).toFixed(2)} ms (the store costs ${(percentile(times, 0.5) / percentile(baseline, 0.5)).toFixed(1)}x)`);
  } finally {
    await kernel.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
