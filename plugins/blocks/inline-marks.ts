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
/** An autolink as the web app reads one (its AUTOLINK, sticky here). */
const AUTOLINK = /<(?:https?:\/\/[^>\s]+|mailto:[^>\s]+)>/iy;
const AUTOLINK_SCHEME = /<(?:https?:\/\/|mailto:)/iy;
const AUTOLINK_STOP = /[>\s]/g;
/**
 * A link as the web app reads one (its LINK, sticky here): the label to its first `]` not escaped; the
 * address `<…>` or a run without blanks whose parentheses pair; bounded, so no opener scans the text.
 */
const LINK = /\[((?:\\.|[^\]\\])*)\]\(\s{0,64}(?:<([^<>\n]{0,2048})>|((?:[^()\s<>]|\([^()\s<>]{0,256}\)){0,2048}))(?:\s{1,64}"[^"]{0,2048}")?\s{0,64}\)/y;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** The characters that may start something; `h` and `H` only in a text holding `://`, as most hold no web address. */
const STOPS = stopTable('\\`(#[<$');
const STOPS_WITH_URLS = stopTable('\\`(#[<$hH');

function stopTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}

export function inlineMarks(content: string): InlineMarks {
  const refs: Ref[] = [];
  const tags = new Set<string>();
  if (content.indexOf('#') === -1 && content.indexOf('((') === -1) return { refs, tags: [] };
  let ticks: Runs | undefined;
  let linkFailsBefore = -1;
  let autolinkFailsBefore = -1;
  const stops = content.includes('://') ? STOPS_WITH_URLS : STOPS;
  const end = content.length;
  let i = 0;
  while (i < end) {
    const code = content.charCodeAt(i);
    if (code >= 128 || stops[code] !== 1) {
      i++;
      continue;
    }
    switch (code) {
      case 92: // `\` before punctuation: that character is text.
        i += PUNCTUATION.test(content.charAt(i + 1)) ? 2 : 1;
        continue;
      case 96: { // a code span: its text is code, closed by the next run of the same length.
        const size = runLength(content, i, 96);
        const close = (ticks ??= new Runs(content, 96)).next(size, i + size);
        i = close === -1 ? i + size : close + size;
        continue;
      }
      case 36: { // `$math$`, as the web app reads it: no blank inside either end
        const close = content.charCodeAt(i + 1) === 36 ? -1 : content.indexOf('$', i + 1);
        if (close > i + 1 && !SPACE.test(content.charAt(i + 1)) && !SPACE.test(content.charAt(close - 1))) {
          i = close + 1;
          continue;
        }
        break;
      }
      case 40: { // `((id "anchor"))`
        const ref = content.charCodeAt(i + 1) === 40 ? matchAt(REF, content, i) : undefined;
        if (ref) {
          refs.push({ id: ref.parts[1]!, anchor: ref.parts[2] ?? ref.parts[3] });
          i = ref.end;
          continue;
        }
        break;
      }
      case 35: { // `#tag#`
        const tag = tagAt(content, i);
        if (tag) {
          tags.add(tag.text);
          i = tag.end;
          continue;
        }
        break;
      }
      case 91: { // `[text](address)`: neither its text nor its address holds a mark.
        // A label opened before where the last failed one stopped fails the same way (the web app's rule).
        if (i < linkFailsBefore) break;
        const link = matchAt(LINK, content, i);
        if (link) {
          i = link.end;
          continue;
        }
        linkFailsBefore = labelEnd(content, i + 1);
        break;
      }
      case 60: { // `<https://…>`; one opened before where the last failed one stopped fails the same way
        if (i < autolinkFailsBefore) break;
        const autolink = matchAt(AUTOLINK, content, i);
        if (autolink) {
          i = autolink.end;
          continue;
        }
        autolinkFailsBefore = autolinkEnd(content, i);
        break;
      }
      default: { // `h` or `H`: a bare web address after a blank or at the start.
        const urlEnd = bareUrlEnd(content, i, 0, end);
        if (urlEnd !== -1) {
          i = urlEnd;
          continue;
        }
      }
    }
    i++;
  }
  return { refs, tags: [...tags] };
}

/** Where an autolink's address, opened at `at`, stops: the first `>` or blank after its scheme (none: at). */
function autolinkEnd(content: string, at: number): number {
  const scheme = matchAt(AUTOLINK_SCHEME, content, at);
  if (!scheme) return at;
  AUTOLINK_STOP.lastIndex = scheme.end;
  return AUTOLINK_STOP.exec(content)?.index ?? content.length;
}

/**
 * Where a link's label, opened just before `from`, stops: its first `]` not escaped, a backslash it
 * cannot take (before a line break), or the end. As the web app's `labelEnd`.
 */
function labelEnd(content: string, from: number): number {
  for (let at = from; at < content.length; at++) {
    const code = content.charCodeAt(at);
    if (code === 93) return at;
    if (code === 92) {
      if (at + 1 >= content.length || LINE_BREAK.test(content.charAt(at + 1))) return at;
      at++;
    }
  }
  return content.length;
}
