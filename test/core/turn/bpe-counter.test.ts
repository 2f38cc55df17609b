import { createRequire } from 'node:module';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import { BpeCounter } from '../../../core/turn/bpe-counter.js';

const ranks = createRequire(import.meta.url)('js-tiktoken/ranks/cl100k_base') as TiktokenBPE;
const reference = new Tiktoken(ranks);
const counter = new BpeCounter(ranks);
const expected = (text: string): number => reference.encode(text, [], []).length;

/** A small seeded generator: the same texts on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('the token counter', () => {
  it("counts as js-tiktoken's encoder does, on text of every kind", () => {
    const texts = [
      '', ' ', 'a', 'Hello, world!', "It's what they're doing, isn't it? I'LL SEE.", 'numbers 1 12 123 1234 12345678901234567890',
      'floccinaucinihilipilification and antidisestablishmentarianism', 'qzxjvkwq brvnmtpl xyzzyplugh',
      '读书读书管理读书知识读书，整理思考项目目标。', 'カタカナとひらがなの混ざった文章です', '한국어 문장도 있습니다',
      'emoji 👩‍👩‍👧‍👦 🇫🇷 ✨ and accents: éàü ñ ø', 'tabs\tand\n\nnew lines\r\n  indented   text  ',
      '<|endoftext|> is counted as plain text, like <|fim_prefix|>', '```ts\nconst x: number = 42; // code\n```',
      'x'.repeat(500), '字'.repeat(300), '\u0000\u0001 control \u007f characters', 'a\u0301 combining e\u0301',
      'lone \ud800 surrogates \udfff and a pair \ud83d\ude00', 'verylongidentifierNamesThatRecurInCode verylongidentifierNamesThatRecurInCode',
    ];
    for (const text of texts) expect(counter.count(text), JSON.stringify(text.slice(0, 40))).toBe(expected(text));
  });

  it('counts a piece of any length in time linear in it, within one token per 256 bytes of the exact count', () => {
    // One run of letters is one piece: merged whole, 200,000 of them took time quadratic in the length.
    expect(counter.count('a'.repeat(200_000))).toBeGreaterThan(0);
    for (const text of ['b'.repeat(2000), '=-'.repeat(1000), '字'.repeat(800)]) {
      const exact = expected(text);
      const counted = counter.count(text);
      expect(counted).toBeGreaterThanOrEqual(exact);
      expect(counted - exact).toBeLessThanOrEqual(Math.ceil(Buffer.byteLength(text) / 256));
    }
  });

  it('counts the same after its memo of pieces filled and was emptied', () => {
    const fresh = new BpeCounter(ranks);
    const words = Array.from({ length: 70_000 }, (_, i) => `w${i.toString(36)}q`);
    const text = words.join(' ');
    expect(fresh.count(text)).toBe(expected(text));
    for (const sample of [words.slice(0, 50).join(' '), words.slice(-50).join(' ')]) expect(fresh.count(sample)).toBe(expected(sample));
  });

  it('counts random text of mixed scripts as js-tiktoken does, the same again when pieces are remembered', () => {
    const next = random(7);
    const alphabet = ['a', 'e', 'q', 'z', 'T', ' ', ' ', '\n', '7', '0', ',', "'", '-', 'é', 'ß', '字', '読', 'の', '한', '😀', '\t', '.', '“', '€'];
    const texts = Array.from({ length: 300 }, () => Array.from({ length: 1 + Math.floor(next() * 120) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
    for (const round of [1, 2]) {
      for (const text of texts) expect(counter.count(text), `round ${round}: ${JSON.stringify(text)}`).toBe(expected(text));
    }
  });
});
