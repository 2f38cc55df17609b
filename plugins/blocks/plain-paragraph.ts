import type { DraftBlock } from './block-model.js';

/**
 * Characters that can open a block other than a paragraph at the start of a line (headings, quotes,
 * lists, breaks, fences, tables, HTML, math, embeds, definitions), or start a construct best left to
 * the parser.
 */
const BLOCK_START = /^[#>\-*+=_|<$`~[{:!\\0-9]/u;
/** Anything but one plain line: other line ends, tabs and odd spaces the parser treats its own way. */
const NOT_ONE_PLAIN_LINE = /[\r\n\t\f\v\u0000\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/u;

/**
 * The draft of Markdown that is one plain paragraph on one line (the usual note typed or appended),
 * without running the parser, which costs most of such a write: its content is the text without the
 * spaces around it, exactly as the parser gives it (checked against the parser by a test over many
 * lines). Anything that might be more than that answers undefined and goes to the parser.
 */
export function plainParagraph(markdown: string, newId: () => string): DraftBlock[] | undefined {
  const text = markdown.replace(/\n+$/u, '');
  if (text.length === 0 || text.length > 4_096 || NOT_ONE_PLAIN_LINE.test(text)) return undefined;
  // Four leading spaces make indented code; trailing two spaces or a backslash, a hard break.
  if (text.startsWith('    ') || / {2}$|\\$/u.test(text)) return undefined;
  const content = text.replace(/^ +| +$/gu, '');
  if (content === '' || BLOCK_START.test(content)) return undefined;
  return [{ id: newId(), type: 'paragraph', content }];
}
