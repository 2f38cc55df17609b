/**
 * Markdown's whitespace is ASCII: space, tab and line ends (CommonMark). JavaScript's `trim` also takes
 * U+3000 (the ideographic space that indents a Chinese paragraph), no-break spaces and the BOM, which
 * are text: trimmed, a paragraph's indentation was lost on every read and write back. Loops, not a
 * regular expression: `/[ \t]+$/` backtracks over every run of spaces that is not at the end, quadratic
 * in a long one (a paragraph of 200,000 spaces and a letter held every read of its document).
 */
const isMarkdownSpace = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13;

export function trimMarkdownSpace(text: string): string {
  let start = 0;
  while (start < text.length && isMarkdownSpace(text.charCodeAt(start))) start++;
  let end = text.length;
  while (end > start && isMarkdownSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

export function trimMarkdownSpaceEnd(text: string): string {
  let end = text.length;
  while (end > 0 && isMarkdownSpace(text.charCodeAt(end - 1))) end--;
  return end === text.length ? text : text.slice(0, end);
}
