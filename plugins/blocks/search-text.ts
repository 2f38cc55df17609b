/**
 * Scripts written without spaces between words. The full-text tokenizer (unicode61) splits on spaces and
 * punctuation only, so a run of Chinese would be one token and a word inside it unfindable; with each
 * such character made a token of its own, a phrase query of the characters finds any substring.
 */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;

/** The text the full-text index sees, for documents and for queries alike. */
export function searchText(text: string): string {
  return text.replace(UNSPACED, ' $& ');
}
