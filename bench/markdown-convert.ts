/**
 * Markdown ↔ block conversion speed: blocks per second for markdownToBlocks (parse included) and
 * blocksToMarkdown over a generated corpus of ~100k blocks, as many small documents and as one large
 * one; plus plainText + parseRefs + parseTags per leaf block, against a remark parse per block.
 * Run: npx tsc -p tsconfig.json && node dist/bench/markdown-convert.js
 */
import { toString } from 'mdast-util-to-string';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import type { DraftBlock } from '../plugins/blocks/block-model.js';
import { parseRefs, parseTags, plainText } from '../plugins/blocks/inline-syntax.js';
import { markdownToBlocks } from '../plugins/blocks/markdown-in.js';
import { blocksToMarkdown } from '../plugins/blocks/markdown-out.js';

const TARGET_BLOCKS = Number(process.env.BENCH_BLOCKS ?? 100_000);
const DOCUMENTS = 1_000;
const ROUNDS = 3;

let seed = 42;
function random(n: number): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed % n;
}

const ref = (): string => `((20240101${String(100_000 + random(899_999))}-${random(36 ** 6).toString(36).padStart(7, 'a')} "anchor ${random(99)}"))`;
const sentence = (): string => [
  `Some *emphasis* and **strong** text about item ${random(1000)}`,
  `a [link](https://example.com/${random(500)}) and a ${ref()}`,
  `tagged #topic/${random(20)}# with \`inline code\` and ~~old~~ words`,
  `中文内容 #标签${random(9)}# plain words follow here`,
][random(4)]!;

const SECTIONS: (() => string)[] = [
  () => `${'#'.repeat(1 + random(3))} Section ${random(1000)} #tag${random(10)}#`,
  () => `${sentence()},\n${sentence()}.`,
  () => `- ${sentence()}\n  - ${sentence()}\n    - ${sentence()}\n    - deep item\n- ${sentence()}`,
  () => `1. first ${sentence()}\n2. second\n   1. nested ordered\n3. third`,
  () => `- [ ] open task ${random(100)}\n- [x] done task ${ref()}\n- [ ] another`,
  () => '```ts\nconst x = ' + random(100) + ';\nconsole.log(x);\n```',
  () => `| Name | Count |\n| :--- | ---: |\n| apples | ${random(50)} |\n| pears | ${random(50)} |`,
  () => `> ${sentence()}\n> - quoted list item\n> - another ${ref()}`,
  () => `> [!NOTE]\n> ${sentence()}`,
];

function countBlocks(blocks: readonly DraftBlock[]): number {
  let n = 0;
  for (const block of blocks) n += 1 + countBlocks(block.children ?? []);
  return n;
}

function corpus(): { documents: string[]; blocks: number } {
  const parts: string[] = [];
  let blocks = 0;
  const id = (): string => 'x';
  while (blocks < TARGET_BLOCKS) {
    // A paragraph between sections keeps neighbouring lists from merging into one.
    const part = `${SECTIONS[random(SECTIONS.length)]!()}\n\nBetween sections ${random(1000)}.`;
    blocks += countBlocks(markdownToBlocks(part, id));
    parts.push(part);
  }
  const size = Math.ceil(parts.length / DOCUMENTS);
  const documents: string[] = [];
  for (let i = 0; i < parts.length; i += size) documents.push(parts.slice(i, i + size).join('\n\n') + '\n');
  return { documents, blocks };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function rate(count: number, fn: () => void): number {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  return count / median(times);
}

function leaves(blocks: readonly DraftBlock[], out: DraftBlock[] = []): DraftBlock[] {
  for (const block of blocks) {
    if (block.children) leaves(block.children, out);
    else out.push(block);
  }
  return out;
}

function main(): void {
  const { documents, blocks } = corpus();
  const whole = documents.join('\n');
  let n = 0;
  const newId = (): string => `20240101120000-${(n++ % 78_364_164_096).toString(36).padStart(7, '0')}`;
  const parsed = documents.map((doc) => markdownToBlocks(doc, newId));
  const wholeBlocks = markdownToBlocks(whole, newId);
  const leafBlocks = leaves(parsed.flat());
  if (countBlocks(wholeBlocks) !== blocks) throw new Error(`corpus parses to ${countBlocks(wholeBlocks)} blocks, expected ${blocks}`);
  const fmt = (value: number): string => `${Math.round(value).toLocaleString('en').padStart(10)} blocks/s`;
  // Warm up every path before measuring.
  for (const doc of documents) blocksToMarkdown(markdownToBlocks(doc, newId));

  const parseDocs = rate(blocks, () => { for (const doc of documents) markdownToBlocks(doc, newId); });
  const parseWhole = rate(blocks, () => markdownToBlocks(whole, newId));
  const writeDocs = rate(blocks, () => { for (const doc of parsed) blocksToMarkdown(doc); });
  const writeWhole = rate(blocks, () => blocksToMarkdown(wholeBlocks));
  const scan = rate(leafBlocks.length, () => { for (const block of leafBlocks) { plainText(block); parseRefs(block.content ?? ''); parseTags(block.content ?? ''); } });
  const remark = unified().use(remarkParse).use(remarkGfm).use(remarkMath).freeze();
  const sample = leafBlocks.slice(0, 10_000);
  const viaRemark = rate(sample.length, () => { for (const block of sample) toString(remark.parse(block.content ?? '')); });

  console.log(`markdown conversion, ${blocks.toLocaleString('en')} blocks (${(whole.length / 1e6).toFixed(1)} MB), ${ROUNDS} rounds (median), node ${process.version}`);
  console.log(`  markdownToBlocks, ${documents.length} documents  ${fmt(parseDocs)}`);
  console.log(`  markdownToBlocks, one document    ${fmt(parseWhole)}`);
  console.log(`  blocksToMarkdown, ${documents.length} documents  ${fmt(writeDocs)}`);
  console.log(`  blocksToMarkdown, one document    ${fmt(writeWhole)}`);
  console.log(`  plainText+parseRefs+parseTags     ${fmt(scan)}  (${leafBlocks.length.toLocaleString('en')} leaf blocks)`);
  console.log(`  remark parse + toString per block ${fmt(viaRemark)}  (for comparison, ${sample.length.toLocaleString('en')} leaf blocks)`);
}

main();
