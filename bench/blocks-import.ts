/**
 * Blocks plugin figures (issue 3): import of a synthetic corpus (files plus index), `index rebuild`,
 * index size per million blocks, and the latency of updating one block in a 1,000-block document.
 *
 *   node dist/bench/blocks-import.js            # 10,000 documents, about 1,000,000 blocks
 *   BENCH_DOCS=1000 node dist/bench/blocks-import.js
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';
import type { Principal } from '../core/plugin-api.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 10_000);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 1_000);
const person: Principal = { kind: 'person', name: 'bench', role: 'admin' };

/** About 100 blocks: headings, paragraphs with marks, refs and tags, a nested list, a task list, code, a table. */
function documentMarkdown(n: number): string {
  const parts: string[] = [];
  for (let section = 0; section < 6; section++) {
    parts.push(`## Section ${section} of note ${n}`);
    for (let p = 0; p < 5; p++) parts.push(`Paragraph ${p} with **bold**, _emphasis_, a [link](https://example.com/${n}) and #topic${(n + p) % 50}# about item ${n * 31 + p}.`);
    parts.push(['- first item', '- second item', '  - nested item', '- [ ] a task'].join('\n'));
  }
  parts.push('```ts\nconst value = 1;\n```');
  parts.push('| a | b |\n| - | - |\n| 1 | 2 |');
  return `${parts.join('\n\n')}\n`;
}

async function writeCorpus(folder: string, docs: number): Promise<void> {
  const perFolder = 100;
  for (let i = 0; i < docs; i++) {
    const sub = join(folder, `group-${String(Math.floor(i / perFolder)).padStart(4, '0')}`);
    if (i % perFolder === 0) await mkdir(sub, { recursive: true });
    await writeFile(join(sub, `note-${i}.md`), documentMarkdown(i));
  }
}

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(folder)) total += (await stat(join(folder, name))).size;
  return total;
}

async function call(kernel: Kernel, target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const outcome = await kernel.pipeline.call({ target, input, principal: person });
  if (outcome.status !== 'ok') throw new Error('unexpected confirmation');
  return outcome.value as Record<string, unknown>;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-blocks-'));
  const corpus = join(root, 'corpus');
  console.log(`writing a corpus of ${DOCS} Markdown documents…`);
  await writeCorpus(corpus, DOCS);
  const config = {
    actions: { timeoutMs: 3_600_000 }, pluginHost: { activationTimeoutMs: 600_000 },
    plugins: { blocks: { config: { watch: false, welcome: false } } },
  };
  const kernel = await Kernel.boot({ workspace: join(root, 'ws'), config, logger: silentLogger });
  try {
    const notebook = await call(kernel, 'notebook_create', { name: 'Bench' });
    let started = process.hrtime.bigint();
    const imported = await call(kernel, 'import_markdown', { notebook: notebook.id, path: corpus });
    const importSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const blocks = Number(imported.blocks);
    console.log(`import: ${imported.documents} documents, ${blocks} blocks in ${importSeconds.toFixed(1)} s = ${Math.round(blocks / importSeconds)} blocks/s (target 20,000)`);
    started = process.hrtime.bigint();
    const rebuilt = await call(kernel, 'index_rebuild', {});
    const rebuildSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`index rebuild: ${rebuilt.blocks} blocks in ${rebuildSeconds.toFixed(1)} s = ${Math.round(Number(rebuilt.blocks) / rebuildSeconds)} blocks/s (target 20,000)`);
    const db = new Database(join(kernel.workspace.indexDir, 'quire.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = await folderBytes(kernel.workspace.indexDir);
    console.log(`index size: ${(bytes / 2 ** 20).toFixed(1)} MiB for ${blocks} blocks = ${((bytes / 2 ** 20) * 1e6 / blocks).toFixed(0)} MiB per million blocks`);
    await updateLatency(kernel, String(notebook.id));
  } finally {
    await kernel.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** p50/p99 of `block update` on one block of a 1,000-block document (file rewrite + index). */
async function updateLatency(kernel: Kernel, notebook: string): Promise<void> {
  const paragraphs = Array.from({ length: 999 }, (_, i) => `Paragraph number ${i} of the large document, with some #tag${i % 7}# text.`).join('\n\n');
  const doc = await call(kernel, 'document_create', { notebook, title: 'Large', markdown: paragraphs });
  const tree = await call(kernel, 'document_get', { id: doc.id }) as { document: { children: { id: string }[] } };
  const ids = tree.document.children.map((block) => block.id);
  console.log(`update one block in a ${Number(doc.blockCount)}-block document, ${UPDATES} times:`);
  const times: number[] = [];
  for (let i = 0; i < UPDATES + 50; i++) {
    const id = ids[(i * 37) % ids.length]!;
    const started = process.hrtime.bigint();
    await call(kernel, 'block_update', { id, markdown: `Updated ${i} with #tag${i % 7}#.` });
    if (i >= 50) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`  p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms, max ${times[times.length - 1]!.toFixed(2)} ms (target p50 < 5 ms)`);
}

await main();
