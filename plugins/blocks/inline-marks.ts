/**
 * The references and tags of a block's content, read left to right the way the web app shows them
 * (web/src/notes/inline.ts): what is inside a code span, inline math, a link (its text and its
 * address), an autolink or a bare web address is neither. The index read the address
 * `https://app.example.com/#/board#top` as the tag `/board`, and `[Docs #v2#](https://…)` as the
 * tag `v2`, where the page showed no tag.
 * One pass; every closer comes from an index built once per text (inline-scan.ts), so the time is
 * linear in the text however hostile it is.
 */
import { REF, Runs, SPACE, bareUrlEnd, matchAt, runLength, tagAt } from './inline-scan.js';

export interface Ref {
  id: string;
  anchor: string | undefined;
}

export interface InlineMarks {
  /** Every reference, in order, repeats kept. */
  refs: Ref[];
  /** Each distinct tag (the text between its `#`s), in order of first use. */
  tags: string[];
}

const PUNCTUATION = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}_]/u;
/** An autolink as the web app reads one (its AUTOLINK, sticky here). */
const AUTOLINK = /<(?:https?:\/\/[^>\s]+|mailto:[^>\s]+)>/iy;
const AUTOLINK_SCHEME = /<(?:https?:\/\/|mailto:)/iy;
const AUTOLINK_STOP = /[>\s]/;
/**
 * A link as the web app reads one (its LINK, sticky here): the label to its first `]` not escaped; the
 * address `<…>` or a run without blanks whose parentheses pair; bounded, so no opener scans the text.
 */
const LINK = /\[((?:\\.|[^\]\\])*)\]\(\s{0,64}(?:<([^<>\n]{0,2048})>|((?:[^()\s<>]|\([^()\s<>]{0,256}\)){0,2048}))(?:\s{1,64}"[^"]{0,2048}")?\s{0,64}\)/y;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** The characters that may start something; `h` and `H` only in a text holding `://`, as most hold no web address. */
const STOPS = stopTable('\\`(#[<$*_~=');
const STOPS_WITH_URLS = stopTable('\\`(#[<$*_~=hH');

function stopTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}

/** The web app's emphasis markers, in the order it tries them. */
const EMPHASIS = ['**', '__', '~~', '==', '*', '_'];
/** As deep as the web app reads emphasis inside emphasis. */
const MAX_DEPTH = 8;

/** What one text's scan keeps across its parts (the whole, and each emphasis' inner text). */
interface Found {
  refs: Ref[];
  tags: Set<string>;
  stops: Uint8Array;
  ticks?: Runs;
}

export function inlineMarks(content: string): InlineMarks {
  if (content.indexOf('#') === -1 && content.indexOf('((') === -1) return { refs: [], tags: [] };
  const found: Found = { refs: [], tags: new Set(), stops: content.includes('://') ? STOPS_WITH_URLS : STOPS };
  scanPart(content, 0, content.length, 0, found);
  return { refs: found.refs, tags: [...found.tags] };
}

/**
 * Reads [start, end) of the text as the web app reads a part: the whole, or the inner text of an
 * emphasis, which it reads apart (nothing in it runs past its closing marker, and a web address may
 * start right after the opening one: `**https://…#a#**` holds no tag).
 */
function scanPart(content: string, start: number, end: number, depth: number, found: Found): void {
  const { stops } = found;
  // Per part, as in the web app: where a failed opener's search stopped, so no later one searches again.
  let linkFailsBefore = -1;
  let autolinkFailsBefore = -1;
  const noClose = new Map<string, number>();
  let i = start;
  while (i < end) {
    const code = content.charCodeAt(i);
    if (code >= 128 || stops[code] !== 1) {
      i++;
      continue;
    }
    switch (code) {
      case 92: // `\` before punctuation: that character is text.
        i += i + 1 < end && PUNCTUATION.test(content.charAt(i + 1)) ? 2 : 1;
        continue;
      case 96: { // a code span: its text is code, closed by the next run of the same length.
        const size = runLength(content, i, 96, end);
        const close = (found.ticks ??= new Runs(content, 96)).next(size, i + size);
        i = close === -1 || close + size > end ? i + size : close + size;
        continue;
      }
      case 36: { // `$math$`, as the web app reads it: no blank inside either end
        const close = content.charCodeAt(i + 1) === 36 ? -1 : content.indexOf('$', i + 1);
        if (close > i + 1 && close < end && !SPACE.test(content.charAt(i + 1)) && !SPACE.test(content.charAt(close - 1))) {
          i = close + 1;
          continue;
        }
        break;
      }
      case 40: { // `((id "anchor"))`
        const ref = content.charCodeAt(i + 1) === 40 ? matchAt(REF, content, i) : undefined;
        if (ref && ref.end <= end) {
          found.refs.push({ id: ref.parts[1]!, anchor: ref.parts[2] ?? ref.parts[3] });
          i = ref.end;
          continue;
        }
        break;
      }
      case 35: { // `#tag#`
        const tag = tagAt(content, i, end);
        if (tag) {
          found.tags.add(tag.text);
          i = tag.end;
          continue;
        }
        break;
      }
      case 91: { // `[text](address)`: neither its text nor its address holds a mark.
        // A label opened before where the last failed one stopped fails the same way (the web app's rule).
        if (i < linkFailsBefore) break;
        // The label's end first, within the part: the pattern alone would search past it to the next `]`.
        const label = labelEnd(content, i + 1, end);
        const link = label < end && content.charCodeAt(label) === 93 ? matchAt(LINK, content, i) : undefined;
        if (link && link.end <= end) {
          i = link.end;
          continue;
        }
        linkFailsBefore = label;
        break;
      }
      case 60: { // `<https://…>`; one opened before where the last failed one stopped fails the same way
        if (i < autolinkFailsBefore) break;
        // Its end first, within the part: the pattern alone would search past it for a `>`.
        const stop = autolinkEnd(content, i, end);
        const autolink = stop > i && stop < end && content.charCodeAt(stop) === 62 ? matchAt(AUTOLINK, content, i) : undefined;
        if (autolink && autolink.end <= end) {
          i = autolink.end;
          continue;
        }
        autolinkFailsBefore = stop;
        break;
      }
      case 104: case 72: { // `h` or `H`: a bare web address at the part's start or after a blank.
        const urlEnd = bareUrlEnd(content, i, start, end);
        if (urlEnd !== -1) {
          i = urlEnd;
          continue;
        }
        break;
      }
      default: break;
    }
    // Emphasis last, as the web app tries it: its inner text is read as a part of its own.
    const emphasis = depth < MAX_DEPTH ? emphasisAt(content, i, start, end, noClose) : undefined;
    if (emphasis) {
      scanPart(content, emphasis.inner, emphasis.close, depth + 1, found);
      i = emphasis.end;
      continue;
    }
    i++;
  }
}

/**
 * An emphasis opening at `i` within [start, end), as the web app's `emphasisAt` finds one: a marker not
 * followed by a blank (`_` not inside a word), closed by the next marker not after a blank (a single
 * one not doubled). `noClose` keeps, per marker, where a search found no closer: no later opener
 * searches again.
 */
function emphasisAt(content: string, i: number, start: number, end: number, noClose: Map<string, number>): { inner: number; close: number; end: number } | undefined {
  for (const marker of EMPHASIS) {
    const after = i + marker.length;
    if (!content.startsWith(marker, i) || after >= end || SPACE.test(content.charAt(after))) continue;
    // Underscores inside a word are text (CommonMark), in any script: `_config`, `中文_变量`.
    if (marker[0] === '_' && i > start && WORD.test(content.charAt(i - 1))) continue;
    if (i >= (noClose.get(marker) ?? Number.POSITIVE_INFINITY)) continue;
    let close = content.indexOf(marker, after + 1);
    // Whether a marker closes depends on it alone (what is before and after it), not on the opener.
    while (close !== -1 && close < end && (SPACE.test(content.charAt(close - 1)) || (marker.length === 1 && close + 1 < end && content.startsWith(marker, close + 1))
      || (marker[0] === '_' && close + marker.length < end && WORD.test(content.charAt(close + marker.length))))) {
      close = content.indexOf(marker, close + 2);
    }
    if (close === -1 || close + marker.length > end) {
      noClose.set(marker, i);
      continue;
    }
    return { inner: after, close, end: close + marker.length };
  }
  return undefined;
}

/** Where an autolink's address, opened at `at`, stops: the first `>` or blank after its scheme, or the part's end (no scheme: at). */
function autolinkEnd(content: string, at: number, end: number): number {
  const scheme = matchAt(AUTOLINK_SCHEME, content, at);
  if (!scheme) return at;
  let stop = scheme.end;
  while (stop < end && !AUTOLINK_STOP.test(content.charAt(stop))) stop++;
  return stop;
}

/**
 * Where a link's label, opened just before `from`, stops: its first `]` not escaped, a backslash it
 * cannot take (before a line break), or the end. As the web app's `labelEnd`.
 */
function labelEnd(content: string, from: number, end: number): number {
  for (let at = from; at < end; at++) {
    const code = content.charCodeAt(at);
    if (code === 93) return at;
    if (code === 92) {
      if (at + 1 >= end || LINE_BREAK.test(content.charAt(at + 1))) return at;
      at++;
    }
  }
  return end;
}
