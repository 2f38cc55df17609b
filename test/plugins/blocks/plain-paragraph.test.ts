import { describe, expect, it } from 'vitest';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { plainParagraph } from '../../../plugins/blocks/plain-paragraph.js';

/** A small seeded generator, so that a failure names an input that can be run again. */
function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), x | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['note', 'agent', '读书', 'Øresund', ' ', '  ', '*', '**', '_', '`', '#', '#tag#', '((20200101000000-aaaaaaa "a"))', '[', ']', '(', ')', '<', '>', '!', '\\', '$', '$$', '|', '-', '+', '1.', '2)', '~', '{{', '}}', ':', '&amp;', 'http://example.com', '[^1]', '<b>', '\u3000', '=', '---', '> ', '    ', '.', ',', 'x'];

describe('the plain paragraph fast path', () => {
  it('gives exactly what the parser gives, or leaves the input to the parser', () => {
    const next = random(7);
    let fast = 0;
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(next() * 12);
      const text = Array.from({ length }, () => PIECES[Math.floor(next() * PIECES.length)]!).join(next() < 0.5 ? ' ' : '') + (next() < 0.2 ? '\n' : '');
      let n = 0;
      const quick = plainParagraph(text, () => `id${n++}`);
      if (quick === undefined) continue;
      fast++;
      let m = 0;
      expect([text, quick]).toEqual([text, markdownToBlocks(text, () => `id${m++}`)]);
    }
    // Most inputs of a realistic shape take the fast path; the generator above is hostile on purpose.
    expect(fast).toBeGreaterThan(2_000);
    expect(plainParagraph('A paragraph of about four hundred characters, typed by a person, with a #tag# and **bold** words.', () => 'x')).toHaveLength(1);
  });
});
