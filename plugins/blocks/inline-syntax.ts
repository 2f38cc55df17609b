/**
 * Refs, tags and plain text of a block's content, read with scanners rather than a Markdown parse:
 * the indexer runs these on every block it writes, and a remark parse per block costs tens of
 * microseconds where these cost one or two.
 */
import type { Block, DraftBlock } from './block-model.js';
import { Ahead } from './inline-scan.js';
import { inlineMarks, type Ref } from './inline-marks.js';
import { inlineToPlain } from './inline-plain.js';

export { inlineToPlain, inlineMarks };
export type { Ref };

/** Every `((id))`, `((id "anchor"))` and `((id 'anchor'))` outside code and links, in order, repeats kept. */
export function parseRefs(content: string): Ref[] {
  return content.indexOf('((') === -1 ? [] : inlineMarks(content).refs;
}

/**
 * Each distinct `#tag#` outside code, links and references, in order of first use; the text between
 * the `#`s. A reference's anchor is its text, not a tag's: two links to headings in one paragraph
 * (`((id "Note#Goals"))` and `((id "Note#Plans"))`) made a tag of everything between their `#`s.
 */
export function parseTags(content: string): string[] {
  return content.indexOf('#') === -1 ? [] : inlineMarks(content).tags;
}

/** The text a search index should hold for a leaf block: Markdown syntax gone, words kept. */
export function plainText(block: Block | DraftBlock): string {
  const content = block.content ?? '';
  switch (block.type) {
    case 'paragraph':
    case 'heading': return inlineToPlain(content);
    case 'table': return tableToPlain(content);
    case 'html': return htmlToPlain(content);
    // Code, math, an embed's target and a document's title are already the text to search.
    default: return content;
  }
}

const DELIMITER_ROW = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

function tableToPlain(content: string): string {
  const rows: string[] = [];
  content.split('\n').forEach((row, index) => {
    if (index === 1 && DELIMITER_ROW.test(row)) return;
    const cells = row.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '').split(/(?<!\\)\|/);
    rows.push(cells.map((cell) => inlineToPlain(cell.trim())).filter((cell) => cell !== '').join(' '));
  });
  return rows.join('\n');
}

/**
 * An HTML block's words: comments and tags become a space. One pass: each `<` takes the first `-->`
 * or `>` after it, found by searches that never cover the same text twice (a text of `<` or `<!--`
 * without closers made the regular expression that did this quadratic).
 */
function htmlToPlain(content: string): string {
  const comments = new Ahead(content, '-->');
  const closers = new Ahead(content, '>');
  let out = '';
  let last = 0;
  for (let i = content.indexOf('<'); i !== -1; i = content.indexOf('<', last)) {
    const comment = content.startsWith('<!--', i) ? comments.next(i + 4) : -1;
    const close = comment !== -1 ? comment + 2 : closers.next(i + 1);
    // No `>` after this `<`: none after a later one either.
    if (close === -1) break;
    out += `${content.slice(last, i)} `;
    last = close + 1;
  }
  return (out + content.slice(last)).replace(/[ \t]+/g, ' ').trim();
}
