import { describe, expect, it } from 'vitest';
import { snippet } from '../../../plugins/search-fulltext/snippet.js';

/** The snippet function as it was before its ASCII and CJK fast paths: every character through NFKD. */
const LOOKALIKES: ReadonlyMap<string, string> = new Map([
  ['ø', 'o'], ['Ø', 'o'], ['ł', 'l'], ['Ł', 'l'], ['đ', 'd'], ['Đ', 'd'], ['ħ', 'h'], ['Ħ', 'h'], ['ı', 'i'],
  ['ß', 'ss'], ['æ', 'ae'], ['Æ', 'ae'], ['œ', 'oe'], ['Œ', 'oe'], ['þ', 'th'], ['Þ', 'th'], ['ð', 'd'], ['Ð', 'd'],
]);
const LOOKALIKE = /[øØłŁđĐħĦıßæÆœŒþÞðÐ]/gu;
function referenceFold(text: string): { text: string; origin: number[] } {
  let folded = '';
  const origin: number[] = [];
  let index = 0;
  for (const char of text) {
    const plain = char.normalize('NFKD').replace(/\p{M}/gu, '').replace(LOOKALIKE, (letter) => LOOKALIKES.get(letter) ?? letter).toLowerCase();
    for (let k = 0; k < plain.length; k++) origin.push(index);
    folded += plain;
    index += char.length;
  }
  origin.push(index);
  return { text: folded, origin };
}
const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
function referenceSnippet(text: string, terms: readonly string[]): string {
  const folded = referenceFold(text);
  const matches: [number, number][] = [];
  for (const term of terms) {
    const needle = referenceFold(term).text.trim();
    if (needle === '') continue;
    for (let at = folded.text.indexOf(needle); at !== -1 && matches.length < 200; at = folded.text.indexOf(needle, at + needle.length)) {
      matches.push([folded.origin[at]!, folded.origin[at + needle.length]!]);
    }
  }
  matches.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const first = matches[0]?.[0] ?? 0;
  const start = Math.max(0, Math.min(first - 40, text.length - 160));
  const end = Math.min(text.length, start + 160);
  let out = start > 0 ? '…' : '';
  let at = start;
  for (const [from, to] of matches) {
    if (from < at || to > end) continue;
    out += `${escapeHtml(text.slice(at, from))}<mark>${escapeHtml(text.slice(from, to))}</mark>`;
    at = to;
  }
  out += escapeHtml(text.slice(at, end));
  return end < text.length ? `${out}…` : out;
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['tomato', 'Tomato', 'TOMATO', ' ', ' ', '. ', '<b>', '&', 'Crème', 'brûlée', 'Øresund', 'Łódź', 'straße', 'ＦＵＬＬ', 'ﾀﾜｰ', 'タワー', 'が',
  '读书', '写作', '，', '。', '　', '한국어', 'ภาษาไทย', 'ﬁ', 'İstanbul', '😀', 'e\u0301', 'x', 'soup', '\u0000', 'Æsir', 'ı'];
const TERMS = ['tomato', 'creme', 'brulee', 'oresund', 'lodz', 'strasse', 'full', 'タワー', 'か', '读书', '书写', '국어', 'ไทย', 'fi', 'istanbul', 'e', 'soup', 'aesir', 'i'];

describe('snippets', () => {
  it('are the same as those of the character-by-character fold, for ASCII, CJK and mixed text', () => {
    const next = random(14);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    for (let i = 0; i < 1500; i++) {
      const ascii = i % 3 === 0;
      const parts: string[] = [];
      const length = 1 + Math.floor(next() * 80);
      for (let k = 0; k < length; k++) parts.push(ascii ? pick(['tomato', 'Tomato', ' ', 'soup', '<b>', '&', 'x', 'I', '. ']) : pick(PIECES));
      const text = parts.join('');
      const terms = [pick(TERMS), ...(next() < 0.5 ? [pick(TERMS)] : [])];
      expect([text, terms, snippet(text, terms)]).toEqual([text, terms, referenceSnippet(text, terms)]);
    }
  });

  it('mark matches in ASCII text without changing its case, and escape HTML', () => {
    expect(snippet('The <b>Tomato</b> & the tomato', ['tomato'])).toBe('The &lt;b&gt;<mark>Tomato</mark>&lt;/b&gt; &amp; the <mark>tomato</mark>');
    expect(snippet('读书和写作 and Reading', ['读书', 'reading'])).toBe('<mark>读书</mark>和写作 and <mark>Reading</mark>');
  });
});
