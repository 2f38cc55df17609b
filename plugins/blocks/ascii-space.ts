/**
 * Markdown's whitespace is ASCII: space, tab and line ends (CommonMark). JavaScript's `trim` also takes
 * U+3000 (the ideographic space that indents a Chinese paragraph), no-break spaces and the BOM, which
 * are text: trimmed, a paragraph's indentation was lost on every read and write back.
 */
export function trimMarkdownSpace(text: string): string {
  return text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
}

export function trimMarkdownSpaceEnd(text: string): string {
  return text.replace(/[ \t\r\n]+$/, '');
}
