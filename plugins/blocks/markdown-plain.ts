/**
 * The fast path of the Markdown import: a top-level stretch of source that holds only plain paragraphs
 * and ATX headings is turned into blocks here, without micromark, which spends about 1 µs a character
 * tokenizing text whose inline syntax is then thrown away (content is sliced from the source). What
 * counts as plain is deliberately narrow (every line must start in a way no block construct can), and
 * anything else goes to the full parser; test/plugins/blocks/markdown-fast-path.test.ts checks that
 * both give the same blocks.
 */

/** A block found on the fast path: its content is still the raw source span (see markdown-in's slice). */
export type PlainBlock =
  | { readonly kind: 'paragraph'; readonly start: number; readonly end: number }
  | { readonly kind: 'heading'; readonly depth: number; readonly start: number; readonly end: number };

/** An ATX heading whose content needs no closing-sequence analysis: the line does not end with `#`. */
const ATX = /^(#{1,6})[ \t]+(?=[^ \t])/;

/**
 * The blocks of `src[start, end)` when it holds only plain paragraphs, headings and blank lines at
 * the top level, else undefined. The caller guarantees that a top-level block starts at `start`
 * (markdown-in's chunk boundaries), so nothing before it can continue into this stretch.
 *
 * A paragraph's first line must start with a letter, a digit that is not an ordered-list marker, or a
 * non-ASCII character: no block construct starts so. Its later lines may be indented, but after the
 * indent must start the same way, so that none can interrupt it (heading, list, quote, fence, thematic
 * break, HTML) or turn it into something else (setext underline, table delimiter row). A lone carriage
 * return is a line ending to Markdown: such text is left to the parser.
 */
export function plainBlocks(src: string, start: number, end: number): PlainBlock[] | undefined {
  const blocks: PlainBlock[] = [];
  let paragraphStart = -1;
  let paragraphEnd = -1;
  const closeParagraph = (): void => {
    if (paragraphStart !== -1) blocks.push({ kind: 'paragraph', start: paragraphStart, end: paragraphEnd });
    paragraphStart = -1;
  };
  for (let at = start; at < end;) {
    let next = src.indexOf('\n', at);
    if (next === -1 || next > end) next = end;
    let lineEnd = next;
    if (lineEnd > at && src.charCodeAt(lineEnd - 1) === 13 /* \r */) lineEnd--;
    const cr = src.indexOf('\r', at);
    if (cr !== -1 && cr < lineEnd) return undefined;
    let first = at;
    while (first < lineEnd && isSpaceOrTab(src.charCodeAt(first))) first++;
    if (first === lineEnd) {
      closeParagraph();
    } else if (paragraphStart !== -1) {
      if (!startsPlainText(src, first, lineEnd)) return undefined;
      paragraphEnd = lineEnd;
    } else {
      // A block's first line: never indented here (an indented one may be code, or continue a list).
      if (first !== at) return undefined;
      if (src.charCodeAt(at) === 35 /* # */) {
        const heading = atxHeading(src, at, lineEnd);
        if (!heading) return undefined;
        blocks.push(heading);
      } else if (startsPlainText(src, at, lineEnd)) {
        paragraphStart = at;
        paragraphEnd = lineEnd;
      } else {
        return undefined;
      }
    }
    at = next + 1;
  }
  closeParagraph();
  return blocks;
}

function isSpaceOrTab(code: number): boolean {
  return code === 32 || code === 9;
}

/** Whether a line (from its first non-blank character) can only be paragraph text. */
function startsPlainText(src: string, at: number, lineEnd: number): boolean {
  const code = src.charCodeAt(at);
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return true;
  // A byte-order mark is dropped by the parser, which would shift every offset after it.
  if (code >= 128) return code !== 0xfeff;
  if (code >= 48 && code <= 57) return !orderedMarker(src, at, lineEnd);
  return false;
}

/** Digits followed by `.` or `)`: possibly an ordered list item (whatever follows), so not plain. */
function orderedMarker(src: string, at: number, lineEnd: number): boolean {
  let i = at;
  while (i < lineEnd && i - at < 10 && src.charCodeAt(i) >= 48 && src.charCodeAt(i) <= 57) i++;
  const after = src.charCodeAt(i);
  return after === 46 || after === 41;
}

/** `#`–`######`, space, text not ending in `#` (so no closing sequence to find): content is the text. */
function atxHeading(src: string, at: number, lineEnd: number): PlainBlock | undefined {
  const line = src.slice(at, lineEnd);
  const match = ATX.exec(line);
  if (!match) return undefined;
  let last = lineEnd;
  while (last > at && isSpaceOrTab(src.charCodeAt(last - 1))) last--;
  if (src.charCodeAt(last - 1) === 35 /* # */) return undefined;
  return { kind: 'heading', depth: match[1]!.length, start: at + match[0].length, end: last };
}
