/**
 * The first `limit` characters of `text`, counted in code points: a surrogate pair (an emoji, a rare
 * CJK character) is never split. Limits on what is sent to a model or a backend are in characters.
 */
export function firstCodePoints(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let out = '';
  let count = 0;
  for (const character of text) {
    if (count++ === limit) break;
    out += character;
  }
  return out;
}

/**
 * `at`, or one before it where a cut there would part a surrogate pair: where a slice of UTF-16 units
 * (a limit in them) may end and keep every character whole (a lone half breaks a client's UTF-8).
 */
export function wholeCharacterEnd(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * The longest start of `text` of at most `limit` bytes in UTF-8, never splitting a code point: file
 * names are limited in bytes (255 on most file systems), and a CJK character takes three.
 */
export function firstUtf8Bytes(text: string, limit: number): string {
  let out = '';
  let bytes = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character, 'utf8');
    if (bytes > limit) break;
    out += character;
  }
  return out;
}
