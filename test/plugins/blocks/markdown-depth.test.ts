import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { treeHeight } from '../../../plugins/blocks/block-depth.js';
import { estimateNesting } from '../../../plugins/blocks/markdown-depth.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { REPO_ROOT } from '../../helpers/harness.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'markdown');
const height = (markdown: string): number => treeHeight(markdownToBlocks(markdown, () => 'x'));
const estimate = (markdown: string): number => estimateNesting(markdown, 1_000).depth;

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/**
 * Markdown of nested containers, each written as CommonMark continues it: a quote's `>` on every
 * line, a list item's indentation (its marker's width) on every line after its first. `ordered` is
 * the marker of ordered lists.
 */
function outline(next: () => number, depth: number, ordered = '1. '): string[] {
  const leaf = [`text ${Math.floor(next() * 100)}`, 'more text', '```\n> > not a quote\n- not a list\n```', '---', '# heading', '    indented code'][Math.floor(next() * 6)]!.split('\n');
  if (depth === 0 || next() < 0.15) return leaf;
  const kind = Math.floor(next() * 4);
  const inner = outline(next, depth - 1, ordered);
  const more = next() < 0.3 ? ['', ...outline(next, depth - 1, ordered)] : [];
  const body = [...inner, ...more];
  if (kind === 0) return body.map((line) => (line === '' ? '>' : `> ${line}`));
  const marker = ['- ', ordered, '* ', '1) '][kind]!;
  const pad = ' '.repeat(marker.length);
  return body.map((line, i) => (i === 0 ? `${marker}${line}` : line === '' ? '' : `${pad}${line}`));
}

describe('the nesting estimate made before Markdown is parsed', () => {
  it('is the depth the parse gives, for the fixtures and for 2,000 generated outlines of quotes, lists and code', () => {
    for (const name of readdirSync(FIXTURES).filter((file) => file.endsWith('.md'))) {
      const markdown = readFileSync(join(FIXTURES, name), 'utf8');
      // The one fixture above its parse holds a footnote: a container to the parser, one leaf block here.
      expect([name, estimate(markdown) - height(markdown)]).toEqual([name, name === 'headings-and-inline.md' ? 1 : 0]);
    }
    const next = random(21);
    for (let i = 0; i < 2_000; i++) {
      const markdown = outline(next, 1 + Math.floor(next() * 12)).join('\n');
      expect([markdown, estimate(markdown)]).toEqual([markdown, height(markdown)]);
    }
  });

  it('is never below the depth the parse gives, where the parser declines some list markers (2,000 outlines with lists starting at 10)', () => {
    // micromark does not start an ordered list at 10 in some places it would start one at 1 (after an
    // item that opens with indented code): the estimate counts them, which errs on the safe side.
    const next = random(5);
    for (let i = 0; i < 2_000; i++) {
      const markdown = outline(next, 1 + Math.floor(next() * 12), '10) ').join('\n');
      expect([markdown, estimate(markdown) >= height(markdown)]).toEqual([markdown, true]);
    }
  });

  it('counts no markers inside fenced code or HTML, in indented code, or in thematic breaks', () => {
    for (const markdown of ['```\n> > > > >\n- - - - x\n```', '<pre>\n> > > >\n</pre>', '    > > > > x', '- - -', '* * * * * *', '> ***\n> - - -']) {
      expect([markdown, estimate(markdown)]).toEqual([markdown, height(markdown)]);
    }
    expect(estimate('- - - x')).toBe(7);
  });

  it('stops at the first line past its limit, for 3,000 nested quotes or list markers on one line', () => {
    expect(estimateNesting(`a\n\n${'> '.repeat(3_000)}x`, 128)).toMatchObject({ line: 3 });
    expect(estimateNesting(`${'- '.repeat(3_000)}x`, 128).depth).toBeGreaterThan(128);
    expect(estimateNesting(`${'[^a]: '.repeat(3_000)}x`, 128).depth).toBeGreaterThan(128);
  });
});
