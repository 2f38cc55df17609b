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
