import { describe, expect, it } from 'vitest';
import { searchText } from '../../../plugins/blocks/search-text.js';

/** searchText as it was before its ASCII fast path: every text through every step. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;
const LOOKALIKES: ReadonlyMap<string, string> = new Map([
  ['ø', 'o'], ['Ø', 'O'], ['ł', 'l'], ['Ł', 'L'], ['đ', 'd'], ['Đ', 'D'], ['ħ', 'h'], ['Ħ', 'H'], ['ı', 'i'],
  ['ß', 'ss'], ['æ', 'ae'], ['Æ', 'AE'], ['œ', 'oe'], ['Œ', 'OE'], ['þ', 'th'], ['Þ', 'TH'], ['ð', 'd'], ['Ð', 'D'],
]);
const LOOKALIKE = /[øØłŁđĐħĦıßæÆœŒþÞðÐ]/gu;
function slowSearchText(text: string): string {
  return text.normalize('NFKC')
    .replace(LOOKALIKE, (char) => LOOKALIKES.get(char) ?? char)
    .replace(/\p{Cc}/gu, ' ')
    .replace(UNSPACED, ' $& ');
}

/** A deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

const POOLS = [
  'abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,;:!?-_*#[]()`\'"/\\{}~^|<>=+@$%&',
  '\t\n\r\u0000\u0001\u001f\u007f',
  '\u0080\u0085\u009f\u00a0\u00ad éèüñçÅ',
  'øØłŁđĐħĦıßæÆœŒþÞðÐ',
  '中文字符日本語ひらがなカタカナ한국어ไทย',
  'ＡＢＣａｂｃ１２３ﾀﾜｰ㍻ﬁ①',
  'e\u0301a\u0308\u200b\u200d\u2028\ufeff',
  '😀👍🏽',
];

describe('searchText, printable ASCII left as is', () => {
  it('gives the same text as the full path for mixed, ASCII-only and control-only strings', () => {
    const next = random(14);
    for (let round = 0; round < 20_000; round++) {
      // Most strings from one or two pools, so that the ASCII-only branches are taken often.
      const pools = [POOLS[Math.floor(next() * POOLS.length)]!, POOLS[round % 3 === 0 ? 0 : Math.floor(next() * POOLS.length)]!];
      const chars = [...pools.join('')];
      let text = '';
      const length = Math.floor(next() * 40);
      for (let i = 0; i < length; i++) text += chars[Math.floor(next() * chars.length)]!;
      expect(searchText(text)).toBe(slowSearchText(text));
    }
  });

  it('keeps the cases at the edges of ASCII', () => {
    for (const text of ['', ' ', '~', '\u007f', '\u0080', 'a\tb\nc', 'plain words', 'x\u00a0y', 'café', '東京']) {
      expect(searchText(text)).toBe(slowSearchText(text));
    }
  });
});
