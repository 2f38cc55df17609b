/**
 * Snippets are cut in JavaScript from the block's plain text, for the rows of one page only: the FTS
 * table is contentless (the text lives once, in `blocks`), and the index's text has Chinese characters
 * spaced apart, which a snippet must not show.
 */
import { escapeHtml } from '../../core/index.js';

const WINDOW = 160;
/** The same look-alike letters the index spells out (plugins/blocks/search-text.ts). */
const LOOKALIKES: ReadonlyMap<string, string> = new Map([
  ['ø', 'o'], ['Ø', 'o'], ['ł', 'l'], ['Ł', 'l'], ['đ', 'd'], ['Đ', 'd'], ['ħ', 'h'], ['Ħ', 'h'], ['ı', 'i'],
  ['ß', 'ss'], ['æ', 'ae'], ['Æ', 'ae'], ['œ', 'oe'], ['Œ', 'oe'], ['þ', 'th'], ['Þ', 'th'], ['ð', 'd'], ['Ð', 'd'],
]);
const LOOKALIKE = /[øØłŁđĐħĦıßæÆœŒþÞðÐ]/gu;

interface Folded {
  text: string;
  /** For each position of `text`, the position in the original string; absent when they are the same. */
  origin: number[] | undefined;
}

/** Text that folds to itself but for case: every character below U+0080. */
const ASCII_ONLY = /^[\u0000-\u007f]*$/;
/** Characters whose NFKD form is themselves, with no case and no look-alike: the CJK ideographs (kana decompose). */
const SELF_FOLDING = /[\u4e00-\u9fff]/;

/**
 * Lower case without diacritics, with a map back to the original positions. Most blocks are ASCII
 * (folded by one toLowerCase, positions unchanged) or mostly ASCII and CJK; only the other
 * characters go through NFKD one at a time, which cost 100 µs and more per block when all did.
 */
function fold(text: string): Folded {
  if (ASCII_ONLY.test(text)) return { text: text.toLowerCase(), origin: undefined };
  let folded = '';
  const origin: number[] = [];
  let index = 0;
  for (const char of text) {
    const code = char.charCodeAt(0);
    const plain = code < 0x80 ? (code >= 65 && code <= 90 ? String.fromCharCode(code + 32) : char)
      : SELF_FOLDING.test(char) ? char
        : char.normalize('NFKD').replace(/\p{M}/gu, '').replace(LOOKALIKE, (letter) => LOOKALIKES.get(letter) ?? letter).toLowerCase();
    for (let k = 0; k < plain.length; k++) origin.push(index);
    folded += plain;
    index += char.length;
  }
  origin.push(index);
  return { text: folded, origin };
}

/** Where each term occurs in `text` (original positions), earliest first. */
function occurrences(text: string, terms: readonly string[]): [number, number][] {
  const folded = fold(text);
  const found: [number, number][] = [];
  for (const term of terms) {
    const needle = fold(term).text.trim();
    if (needle === '') continue;
    for (let at = folded.text.indexOf(needle); at !== -1 && found.length < 200; at = folded.text.indexOf(needle, at + needle.length)) {
      found.push(folded.origin ? [folded.origin[at]!, folded.origin[at + needle.length]!] : [at, at + needle.length]);
    }
  }
  return found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
}

/** Up to WINDOW characters around the first match, matches wrapped in <mark>, the rest HTML-escaped. */
export function snippet(text: string, terms: readonly string[]): string {
  const matches = occurrences(text, terms);
  const first = matches[0]?.[0] ?? 0;
  const start = Math.max(0, Math.min(first - WINDOW / 4, text.length - WINDOW));
  const end = Math.min(text.length, start + WINDOW);
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
