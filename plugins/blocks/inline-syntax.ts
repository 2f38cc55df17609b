/**
 * Refs, tags and plain text of a block's content, read with scanners rather than a Markdown parse:
 * the indexer runs these on every block it writes, and a remark parse per block costs tens of
 * microseconds where these cost one or two.
 */
import type { Block, DraftBlock } from './block-model.js';
import { Ahead, REF, Runs, isEscaped, matchAt, runLength, tagAt } from './inline-scan.js';
import { inlineToPlain } from './inline-plain.js';

export { inlineToPlain };

export interface Ref {
  id: string;
  anchor: string | undefined;
}

/** Every `((id))`, `((id "anchor"))` and `((id 'anchor'))` outside code spans, in order, repeats kept. */
export function parseRefs(content: string): Ref[] {
  const refs: Ref[] = [];
  if (content.indexOf('((') === -1) return refs;
  const spans = codeSpans(content);
  for (let i = content.indexOf('(('); i !== -1; i = content.indexOf('((', i + 1)) {
    const match = matchAt(REF, content, i);
    if (!match || inSpans(spans, i, match.end)) continue;
    refs.push({ id: match.parts[1]!, anchor: match.parts[2] ?? match.parts[3] });
    i = match.end - 1;
  }
  return refs;
}

/**
 * Each distinct `#tag#` outside code spans and references, in order of first use; the text between
 * the `#`s. A reference's anchor is its text, not a tag's: two links to headings in one paragraph
 * (`((id "Note#Goals"))` and `((id "Note#Plans"))`) made a tag of everything between their `#`s.
 */
export function parseTags(content: string): string[] {
  if (content.indexOf('#') === -1) return [];
  const tags = new Set<string>();
  const spans = withRefSpans(content, codeSpans(content));
  let i = content.indexOf('#');
  while (i !== -1) {
    const tag = tagAt(content, i);
    if (tag && !isEscaped(content, i) && !inSpans(spans, i, tag.end)) {
      tags.add(tag.text);
      i = content.indexOf('#', tag.end);
    } else {
      i = content.indexOf('#', i + 1);
    }
  }
  return [...tags];
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
 * Start/end pairs of the code spans in `src`, flattened, in order and not overlapping. Closers come
 * from an index of the backtick runs: an opener without a closer does not search the rest of the text.
 */
function codeSpans(src: string): number[] {
  const spans: number[] = [];
  if (src.indexOf('`') === -1) return spans;
  const runs = new Runs(src, 96);
  for (let i = src.indexOf('`'); i !== -1;) {
    if (isEscaped(src, i)) {
      i = src.indexOf('`', i + 1);
      continue;
    }
    const size = runLength(src, i, 96);
    const close = runs.next(size, i + size);
    if (close !== -1) spans.push(i, close + size);
    i = src.indexOf('`', close === -1 ? i + size : close + size);
  }
  return spans;
}

/** Code spans and the references outside them, as one ordered list of spans (start/end pairs, flattened). */
function withRefSpans(content: string, code: readonly number[]): number[] {
  if (content.indexOf('((') === -1) return [...code];
  const merged: number[] = [];
  let next = 0;
  for (let i = content.indexOf('(('); i !== -1; i = content.indexOf('((', i + 1)) {
    const match = matchAt(REF, content, i);
    if (!match || inSpans(code, i, match.end)) continue;
    // The code spans before this reference first, so that the list stays in order.
    while (next < code.length && code[next]! < i) merged.push(code[next++]!, code[next++]!);
    merged.push(i, match.end);
    i = match.end - 1;
  }
  while (next < code.length) merged.push(code[next++]!, code[next++]!);
  return merged;
}

/** Whether [start, end) overlaps a span: a binary search, as a text may hold thousands of spans and refs. */
function inSpans(spans: readonly number[], start: number, end: number): boolean {
  let low = 0;
  let high = spans.length / 2;
  // The first span that ends after `start`; it overlaps when it also starts before `end`.
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (spans[2 * middle + 1]! <= start) low = middle + 1;
    else high = middle;
  }
  return low < spans.length / 2 && spans[2 * low]! < end;
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
