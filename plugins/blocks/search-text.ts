/**
 * Scripts written without spaces between words. The full-text tokenizer (unicode61) splits on spaces and
 * punctuation only, so a run of Chinese would be one token and a word inside it unfindable; with each
 * such character made a token of its own, a phrase query of the characters finds any substring.
 */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;

/**
 * Letters that are not a base letter plus a combining mark, so that removing diacritics leaves them be:
 * written as a person without the key would type them.
 */
const LOOKALIKES: ReadonlyMap<string, string> = new Map([
  ['ø', 'o'], ['Ø', 'O'], ['ł', 'l'], ['Ł', 'L'], ['đ', 'd'], ['Đ', 'D'], ['ħ', 'h'], ['Ħ', 'H'], ['ı', 'i'],
  ['ß', 'ss'], ['æ', 'ae'], ['Æ', 'AE'], ['œ', 'oe'], ['Œ', 'OE'], ['þ', 'th'], ['Þ', 'TH'], ['ð', 'd'], ['Ð', 'D'],
]);
const LOOKALIKE = /[øØłŁđĐħĦıßæÆœŒþÞðÐ]/gu;

const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;
const NOT_ASCII = /[^\x00-\x7f]/;
const ASCII_CONTROL = /[\x00-\x1f\x7f]/g;

/**
 * The text the full-text index sees, for documents and for queries alike: compatibility forms folded
 * (full-width `ＡＢＣ` and half-width `ﾀﾜｰ` read as `ABC` and `タワー`), look-alike letters spelled out,
 * control characters gone, and each character of a script without spaces made a token of its own.
 */
export function searchText(text: string): string {
  // Printable ASCII (most text of most notes) is left as it is by every step below; ASCII with control
  // characters only loses those. A regular expression test costs a fraction of normalize's copy.
  if (!NOT_PRINTABLE_ASCII.test(text)) return text;
  if (!NOT_ASCII.test(text)) return text.replace(ASCII_CONTROL, ' ');
  return text.normalize('NFKC')
    .replace(LOOKALIKE, (char) => LOOKALIKES.get(char) ?? char)
    .replace(/\p{Cc}/gu, ' ')
    .replace(UNSPACED, ' $& ');
}
