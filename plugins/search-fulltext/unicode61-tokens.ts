/**
 * The tokens FTS5's unicode61 tokenizer (with remove_diacritics 2, as blocks_fts is made) finds in a
 * text, for the characters whose treatment is known here: ASCII, Latin letters with diacritics, the
 * common punctuation and spaces, and the scripts written without spaces (Chinese, Japanese kana,
 * Korean syllables). Any other character answers undefined, and the caller lets FTS5 do the work.
 * The set is checked character by character against SQLite's own tokenizer by a test
 * (test/plugins/search-fulltext/unicode61-tokens.test.ts); SQLite's tables are of Unicode 6.1 and
 * JavaScript's of a later version, so characters are admitted by range, not by category alone.
 */

const ASCII_ONLY = /^[\u0000-\u007f]*$/;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
const COMBINING = /\p{M}/gu;
const LETTER = /^\p{L}$/u;
const SEPARATOR = /^[\p{P}\p{S}\p{Z}]$/u;

/** Ranges of characters that are tokens of their own kind, folded to themselves (no case, no diacritics). */
const SELF_FOLDING: readonly (readonly [number, number])[] = [
  [0x3041, 0x3096], // Hiragana letters
  [0x309d, 0x309f], // Hiragana iteration marks, yori
  [0x30a1, 0x30fa], // Katakana letters
  [0x30fc, 0x30ff], // prolonged sound mark, iteration marks, koto
  [0x3400, 0x4db5], // CJK Extension A
  [0x4e00, 0x9fcc], // CJK Unified Ideographs (as of Unicode 6.1)
  [0xac00, 0xd7a3], // Hangul syllables
];

/** Ranges where a character that is punctuation, a symbol or a space (in either version) separates tokens. */
const SEPARATOR_RANGES: readonly (readonly [number, number])[] = [
  [0x00a0, 0x00bf], // Latin-1 punctuation and symbols (the letters ª º and digits ² ³ ¹ ¼ ½ ¾ are not admitted)
  [0x2000, 0x205e], // general punctuation
  [0x3000, 0x3004], // ideographic space and punctuation
  [0x3008, 0x3020], // CJK brackets and marks
  [0x30a0, 0x30a0], // Katakana-Hiragana double hyphen
  [0x30fb, 0x30fb], // Katakana middle dot
];

/** Latin letters with diacritics: folded to the base letter in lower case, as remove_diacritics 2 does. */
const LATIN: readonly [number, number] = [0x00c0, 0x024f];
/** Latin letters SQLite's table leaves as they are (A with dot above and macron), found by the test. */
const LATIN_KEPT: ReadonlySet<number> = new Set([0x01e0, 0x01e1]);

/** For a character above ASCII: its folded form in a token, '' for a separator, undefined if not known here. */
function classify(code: number): string | undefined {
  for (const [low, high] of SELF_FOLDING) if (code >= low && code <= high) return String.fromCharCode(code);
  const char = String.fromCharCode(code);
  if (code >= LATIN[0] && code <= LATIN[1]) {
    if (SEPARATOR.test(char)) return '';
    if (!LETTER.test(char) || LATIN_KEPT.has(code)) return undefined;
    const folded = char.normalize('NFD').replace(COMBINING, '').toLowerCase();
    return /^[a-z]$/.test(folded) ? folded : undefined;
  }
  for (const [low, high] of SEPARATOR_RANGES) if (code >= low && code <= high) return SEPARATOR.test(char) ? '' : undefined;
  return undefined;
}

/** classify() for the characters met so far (a handful per text: most are ASCII). */
const known = new Map<number, string | undefined>();

function fold(code: number): string | undefined {
  if (known.has(code)) return known.get(code);
  const value = classify(code);
  known.set(code, value);
  return value;
}

/**
 * The text's tokens, or undefined when it holds a character outside the known set (or outside the
 * Basic Multilingual Plane). Characters admitted here are listed in LATIN, SELF_FOLDING and
 * SEPARATOR_RANGES.
 */
export function unicode61Tokens(text: string): string[] | undefined {
  if (ASCII_ONLY.test(text)) return text.toLowerCase().split(ASCII_SEPARATORS).filter((token) => token !== '');
  const tokens: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let folded: string | undefined;
    if (code < 0x80) {
      const lower = code >= 65 && code <= 90 ? code + 32 : code;
      folded = (lower >= 48 && lower <= 57) || (lower >= 97 && lower <= 122) ? String.fromCharCode(lower) : '';
    } else {
      folded = fold(code);
      if (folded === undefined) return undefined;
    }
    if (folded !== '') current += folded;
    else if (current !== '') {
      tokens.push(current);
      current = '';
    }
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

/** Where `phrase` occurs in `tokens`: each start position counts, overlapping ones too (as FTS5's instances). */
export function phraseInstances(tokens: readonly string[], phrase: readonly string[]): number {
  let count = 0;
  const last = tokens.length - phrase.length;
  outer: for (let start = 0; start <= last; start++) {
    for (let k = 0; k < phrase.length; k++) if (tokens[start + k] !== phrase[k]) continue outer;
    count++;
  }
  return count;
}

/**
 * Whether an instance of `phrase` could begin in one of `parts` and run on into the next, were they
 * joined in any order: some part ends with the phrase's first tokens (not all of them). A block's tags
 * are one column, in an order the index does not keep.
 */
export function mayCrossParts(parts: readonly (readonly string[])[], phrase: readonly string[]): boolean {
  if (parts.length < 2) return false;
  return parts.some((tokens) => {
    for (let length = 1; length < phrase.length && length <= tokens.length; length++) {
      let same = true;
      for (let k = 0; k < length && same; k++) same = tokens[tokens.length - length + k] === phrase[k];
      if (same) return true;
    }
    return false;
  });
}
