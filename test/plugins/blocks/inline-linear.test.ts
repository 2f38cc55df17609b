import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DraftBlock } from '../../../plugins/blocks/block-model.js';
import { inlineToPlain, parseRefs, parseTags, plainText } from '../../../plugins/blocks/inline-syntax.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { REPO_ROOT } from '../../helpers/harness.js';
import * as reference from './inline-reference.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'markdown');

function leaves(blocks: readonly DraftBlock[], out: DraftBlock[] = []): DraftBlock[] {
  for (const block of blocks) {
    if (block.children) leaves(block.children, out);
    else out.push(block);
  }
  return out;
}

/** A seeded generator, so that a failure names an input that can be reproduced. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** Short texts made of the characters and pieces the scanner treats specially. */
function soup(count: number): string[] {
  const pieces = ['[', ']', '(', ')', '\\', '`', '``', '*', '**', '_', '~~', '!', '<', '>', '#', '$', '$$', '&', ';', '^', '-', ' ', '\n', 'a', 'b', '1', ':', '"', "'", '/', '|',
    '((20240101120000-abcdefg))', '((20240101120000-abcdefg "x"))', 'http:', 'https://e.com/a_b#c#', '<!--', '-->', '&amp;', '&#65;', 'a@b', '<b>', '[^n]', '](u)', '][r]'];
  const next = random(13);
  return Array.from({ length: count }, () => {
    let text = '';
    const length = 1 + Math.floor(next() * 24);
    for (let i = 0; i < length; i++) text += pieces[Math.floor(next() * pieces.length)]!;
    return text;
  });
}

function same(text: string): void {
  for (const type of ['paragraph', 'table', 'html'] as const) {
    expect([type, text, plainText({ type, content: text })]).toEqual([type, text, reference.plainText({ type, content: text })]);
  }
}

describe('plain text, refs and tags of inline Markdown', () => {
  it('is what the scanner it replaced gave (plain text), for every leaf of the fixtures and for 20,000 random texts', () => {
    const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.md'));
    const blocks = names.flatMap((name) => leaves(markdownToBlocks(readFileSync(join(FIXTURES, name), 'utf8'), () => 'x')));
    expect(blocks.length).toBeGreaterThan(50);
    for (const block of blocks) {
      expect(plainText(block)).toBe(reference.plainText(block));
    }
    for (const text of soup(20_000)) same(text);
  });

  it('reads nested, unbalanced and escaped brackets as before', () => {
    const cases: [string, string][] = [
      ['[[a](u)](v)', 'a'],
      ['[a [b] c](u)', 'a [b] c'],
      ['[a](b(c)d) e', 'a e'],
      ['[a](b', '[a](b'],
      ['[a]((b)', '[a]((b)'],
      ['[[a]', '[[a]'],
      ['[a]]', '[a]]'],
      ['![[x](y)](z)', 'x'],
      ['[^1] and [^ x]', ' and [^ x]'],
      ['[a][b][c]', 'a[c]'],
      ['[`]`](u)', '[]](u)'],
      ['\\[a](u)', '[a](u)'],
      ['[a\\]b](u)', 'a]b'],
      ['[*a*](u)*', 'a'],
      ['[a](u)[b](v)', 'ab'],
      ['[x]((20240101120000-abcdefg))', 'x'],
      ['[*a](u) b*', '*a b'],
      ['[a #t#](u) #u#', 'a t u'],
    ];
    for (const [text, plain] of cases) {
      expect([text, inlineToPlain(text)]).toEqual([text, plain]);
      same(text);
    }
  });

  it('reads 30,000 nested links and 150 KB of unclosed brackets, comments and code runs to the end', () => {
    const depth = 30_000;
    expect(inlineToPlain(`${'['.repeat(depth)}a${'](u)'.repeat(depth)}`)).toBe('a');
    expect(inlineToPlain(`${'!['.repeat(depth)}a${'](u)'.repeat(depth)}`)).toBe('a');
    const open = '['.repeat(150_000);
    expect(plainText({ type: 'paragraph', content: open })).toBe(open);
    expect(plainText({ type: 'paragraph', content: '[a]('.repeat(37_500) })).toBe('[a]('.repeat(37_500));
    expect(plainText({ type: 'paragraph', content: `${'[^'.repeat(50_000)} ${']'.repeat(50_000)}` })).toBe(`${'[^'.repeat(50_000)} ${']'.repeat(50_000)}`);
    expect(plainText({ type: 'paragraph', content: '<!--'.repeat(37_500) })).toBe('<!--'.repeat(37_500));
    expect(plainText({ type: 'html', content: `<div>${'<'.repeat(150_000)}` })).toBe('<'.repeat(150_000));
    expect(plainText({ type: 'html', content: '<!--'.repeat(37_500) })).toBe('<!--'.repeat(37_500));
    let ticks = '';
    for (let size = 1; ticks.length < 150_000; size++) ticks += `${'`'.repeat(size)}a`;
    expect(plainText({ type: 'paragraph', content: ticks })).toBe(ticks);
    const refs = '`c` ((20240101120000-abcdefg)) #t# '.repeat(5_000);
    expect(parseRefs(refs)).toHaveLength(5_000);
    expect(parseTags(refs)).toEqual(['t']);
  });
});
