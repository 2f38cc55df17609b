/**
 * Inline scanning time against input size (issue 13, point 4): what the indexer runs on every leaf
 * block (plainText, parseRefs, parseTags), on nested `[` (the input that was quadratic) and on the
 * realistic corpus of ../shared/bench/corpus.mjs (paragraphs of about 400 characters) joined into
 * texts of growing size. Each row doubles the input, so "x prev" is 2.0 when the time is linear.
 *
 * Run: npm run build && node dist/bench/inline-parse.js
 * Before/after: INLINE_BEFORE=/path/to/an/older/compiled/inline-syntax.js runs that module on the same
 * inputs, alternating with this one, and prints after/before; a size where the older one takes more
 * than BEFORE_BUDGET_MS (default 10 s) ends its series.
 * QUIRE_SHARED_BENCH: the folder of corpus.mjs (default ../shared/bench beside the checkout).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Block, DraftBlock } from '../plugins/blocks/block-model.js';
import * as current from '../plugins/blocks/inline-syntax.js';

interface Scanner {
  plainText(block: Block | DraftBlock): string;
  parseRefs(content: string): unknown[];
  parseTags(content: string): string[];
}

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHARED = process.env.QUIRE_SHARED_BENCH ?? join(REPO, '..', 'shared', 'bench');
const BUDGET_MS = Number(process.env.BEFORE_BUDGET_MS ?? 10_000);
const SIZES = [16, 32, 64, 128, 256, 512].map((kb) => kb * 1024);

/** The indexer's work on one leaf: its plain text, refs and tags. */
function scan(scanner: Scanner, content: string): void {
  scanner.plainText({ type: 'paragraph', content });
  scanner.parseRefs(content);
  scanner.parseTags(content);
}

/** Median of `rounds` runs, in ms; one run when a single one takes long. */
function time(scanner: Scanner, content: string, rounds = 5): number {
  const runs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    scan(scanner, content);
    runs.push(performance.now() - started);
    if (runs[0]! > 1_000) break;
  }
  return runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
}

/** Paragraphs of the shared corpus (the generator writes documents; their blocks are split back out). */
async function corpusParagraphs(): Promise<string[]> {
  const { generate } = await import(pathToFileURL(join(SHARED, 'corpus.mjs')).href) as { generate(out: string, blocks: number, notebooks?: number): unknown };
  const folder = await mkdtemp(join(tmpdir(), 'quire-inline-bench-'));
  try {
    generate(folder, 2_000, 1);
    const paragraphs: string[] = [];
    for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.md')) continue;
      const text = await readFile(join(entry.parentPath, entry.name), 'utf8');
      paragraphs.push(...text.split('\n\n').filter((part) => !part.startsWith('#')));
    }
    return paragraphs;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** One text of about `size` characters made of corpus paragraphs joined by spaces (one long paragraph). */
function corpusText(paragraphs: string[], size: number): string {
  let text = '';
  for (let i = 0; text.length < size; i++) text += `${paragraphs[i % paragraphs.length]!} `;
  return text.slice(0, size);
}

function series(title: string, make: (size: number) => string, before: Scanner | undefined): void {
  console.log(`\n${title}`);
  console.log(`  ${'size'.padStart(7)}  ${'after ms'.padStart(9)}  x prev${before ? `  ${'before ms'.padStart(10)}  x prev  after/before` : ''}`);
  let previous: number | undefined;
  let previousBefore: number | undefined;
  let beforeDone = !before;
  for (const size of SIZES) {
    const content = make(size);
    const after = time(current, content);
    let row = `  ${`${size / 1024} KB`.padStart(7)}  ${after.toFixed(2).padStart(9)}  ${previous ? (after / previous).toFixed(2).padStart(6) : '     -'}`;
    if (before && !beforeDone) {
      try {
        const old = time(before, content, 3);
        row += `  ${old.toFixed(2).padStart(10)}  ${previousBefore ? (old / previousBefore).toFixed(2).padStart(6) : '     -'}  ${(after / old).toFixed(4).padStart(12)}`;
        previousBefore = old;
        beforeDone = old > BUDGET_MS;
      } catch (error) {
        // The older scanner read nested links by recursion.
        row += `  ${(error instanceof RangeError ? 'stack overflow' : String(error)).padStart(10)}`;
        beforeDone = true;
      }
    }
    console.log(row);
    previous = after;
  }
}

async function main(): Promise<void> {
  const before = process.env.INLINE_BEFORE ? await import(pathToFileURL(process.env.INLINE_BEFORE).href) as Scanner : undefined;
  const paragraphs = await corpusParagraphs();
  const sample = paragraphs.join('\n');
  // Warm both up on each kind of text, so that the first row does not time the compiler.
  const warmUp = [sample.slice(0, 20_000), '['.repeat(1_000), `${'['.repeat(200)}a${'](u)'.repeat(200)}`];
  for (let i = 0; i < 20; i++) {
    for (const text of warmUp) {
      scan(current, text);
      if (before) scan(before, text);
    }
  }
  console.log(`inline scanning (plainText + parseRefs + parseTags), node ${process.version}${before ? `, before = ${process.env.INLINE_BEFORE}` : ''}`);
  console.log(`corpus: ${paragraphs.length} paragraphs, mean ${Math.round(sample.length / paragraphs.length)} characters`);
  series('nested brackets: "[" repeated', (size) => '['.repeat(size), before);
  series('nested links: "[" x n, "a", "](u)" x n', (size) => `${'['.repeat(size / 5)}a${'](u)'.repeat(size / 5)}`, before);
  series('corpus paragraphs joined into one text', (size) => corpusText(paragraphs, size), before);
  const started = performance.now();
  for (const paragraph of paragraphs) scan(current, paragraph);
  const perParagraph = (performance.now() - started) / paragraphs.length;
  console.log(`\ncorpus, paragraph by paragraph (as the indexer sees them): ${(perParagraph * 1000).toFixed(1)} µs each, ${(sample.length / 1e6 / ((perParagraph * paragraphs.length) / 1000)).toFixed(1)} MB/s`);
}

await main();
