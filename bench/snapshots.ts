/**
 * Snapshot figures (issue 6): on a synthetic workspace of 10,000 documents (about 100 MB), the first
 * snapshot (MB/s), an incremental one after 10 changed documents (target under 200 ms), the rollback of
 * those 10, and the repository size after 20 snapshots with 1% churn each.
 *
 *   node dist/bench/snapshots.js            # BENCH_DOCS=2000 for a shorter run
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotRepo } from '../plugins/snapshots/snapshot-repo.js';
import type { FileChange } from '../plugins/snapshots/file-change.js';
import { IntentJournal } from '../core/fs/intent-journal.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 10_000);
const DOC_BYTES = 10_000;

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  return total;
}

function documentText(i: number, version: number): string {
  // Words until the paragraph holds about DOC_BYTES characters, so 10,000 documents make about 100 MB.
  const parts: string[] = [];
  for (let w = 0, length = 0; length < DOC_BYTES; w++) {
    const word = `w${(i * 7919 + w * 31 + version) % 50000}`;
    parts.push(word);
    length += word.length + 1;
  }
  const words = parts.join(' ');
  return JSON.stringify({ id: `doc-${i}`, type: 'document', content: `Doc ${i}`, attrs: {}, children: [{ id: `p-${i}`, type: 'paragraph', content: words, attrs: {} }] }, null, 2);
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-snap-'));
  const data = join(root, 'data');
  try {
    for (let i = 0; i < DOCS; i++) {
      const folder = join(data, `nb${Math.floor(i / 1000)}`);
      if (i % 1000 === 0) await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `doc-${i}.json`), documentText(i, 0));
    }
    const dataBytes = await folderBytes(data);
    const repo = new SnapshotRepo(join(root, 'repo'), data, new IntentJournal<FileChange>(join(root, '.quire', 'journal', 'snapshots')));
    let started = process.hrtime.bigint();
    await repo.create('first', 'person:bench');
    const firstSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`first snapshot of ${DOCS} documents (${(dataBytes / 2 ** 20).toFixed(0)} MiB): ${firstSeconds.toFixed(1)} s = ${(dataBytes / 2 ** 20 / firstSeconds).toFixed(0)} MiB/s`);
    const changed = Array.from({ length: 10 }, (_, k) => k * Math.floor(DOCS / 10));
    for (const i of changed) await writeFile(join(data, `nb${Math.floor(i / 1000)}`, `doc-${i}.json`), documentText(i, 1));
    const base = (await repo.latest())!.id;
    started = process.hrtime.bigint();
    await repo.create('ten changed', 'person:bench');
    console.log(`incremental snapshot after 10 changed documents: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms (target under 200 ms)`);
    started = process.hrtime.bigint();
    const restored = await repo.rollback(base);
    console.log(`rollback of those 10 documents: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms (${restored.changed.length} files restored)`);
    for (let round = 0; round < 18; round++) {
      for (let k = 0; k < DOCS / 100; k++) {
        const i = (round * 131 + k * 97) % DOCS;
        await writeFile(join(data, `nb${Math.floor(i / 1000)}`, `doc-${i}.json`), documentText(i, round + 2));
      }
      await repo.create(`churn ${round}`, 'person:bench');
    }
    const repoBytes = await folderBytes(join(root, 'repo'));
    console.log(`repository after 20 snapshots with 1% churn each: ${(repoBytes / 2 ** 20).toFixed(0)} MiB (notes: ${(dataBytes / 2 ** 20).toFixed(0)} MiB)`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
