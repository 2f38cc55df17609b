/**
 * Inline Markdown → the words a search index holds, in one pass over the text. A link's label is read
 * in place, as a part of the text with its own bounds, rather than cut out and read again: nested
 * links cost nothing more and no recursion can exhaust the stack. Closers (of brackets, parentheses,
 * code spans, comments) come from indexes built once (inline-scan.ts), so the time is linear in the
 * text, where searching forward from each opener was quadratic.
 */
import { Ahead, Pairs, REF, Runs, SPACE, bareUrlEnd, matchAt, runLength, tagAt } from './inline-scan.js';

/** A replacement for the source from the current position up to `end`; or a link's label to read in place. */
interface Step {
  text: string;
  end: number;
  label?: { start: number; end: number };
}

/** The text, the part of it being read (the whole, or a link's label), and its indexes, built when first needed. */
class Scan {
  start = 0;
  end: number;
  private pairIndex: Pairs | undefined;
  private readonly runIndex = new Map<number, Runs>();
  private whitespace: Ahead | undefined;
  private commentEnd: Ahead | undefined;

  constructor(readonly src: string) {
    this.end = src.length;
  }

  /** The character at `i`, or '' outside the part being read (as if it had been cut out). */
  char(i: number): string {
    return i >= this.start && i < this.end ? this.src.charAt(i) : '';
  }

  pairs(): Pairs {
    return (this.pairIndex ??= new Pairs(this.src));
  }

  runs(code: number): Runs {
    let runs = this.runIndex.get(code);
    if (!runs) this.runIndex.set(code, (runs = new Runs(this.src, code)));
    return runs;
  }

  nextWhitespace(from: number): number {
    return (this.whitespace ??= new Ahead(this.src, /\s/g)).next(from);
  }

  nextCommentEnd(from: number): number {
    return (this.commentEnd ??= new Ahead(this.src, '-->')).next(from);
  }
}

/** The characters that may start something; `h` and `H` only in a text holding `://`, as most hold no web address. */
const SPECIAL = specialTable('\\`*_~[!<#$&(');
const SPECIAL_WITH_URLS = specialTable('\\`*_~[!<#$&(hH');
const HAS_SPECIAL = /[\\`*_~[!<#$&(]/;

function specialTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}

/** Inline Markdown → its words: markers, URLs and tags' `#` dropped, code and math kept raw. */
export function inlineToPlain(src: string): string {
  // A bare web address needs no look: what it would hide (a `#`, `_`, `*`) is special already.
  if (!HAS_SPECIAL.test(src)) return src;
  const stops = src.includes('://') ? SPECIAL_WITH_URLS : SPECIAL;
  const scan = new Scan(src);
  // The parts being read around the current one: where each resumes once its label is read.
  const outer: { start: number; end: number; resume: number }[] = [];
  let out = '';
  let last = 0;
  // The end of the current part, kept in a local: this loop visits every character.
  let end = scan.end;
  for (let i = 0; ;) {
    // A tight loop to the next character that may start something: most characters are words.
    while (i < end) {
      const code = src.charCodeAt(i);
      if (code < 128 && stops[code] === 1) break;
      i++;
    }
    if (i >= end) {
      out += src.slice(last, end);
      const part = outer.pop();
      if (!part) return out;
      scan.start = part.start;
      end = scan.end = part.end;
      i = last = part.resume;
      continue;
    }
    const step = special(scan, i, src.charCodeAt(i));
    if (!step) {
      i++;
      continue;
    }
    out += src.slice(last, i);
    if (step.label) {
      outer.push({ start: scan.start, end, resume: step.end });
      scan.start = step.label.start;
      end = scan.end = step.label.end;
      i = last = step.label.start;
    } else {
      out += step.text;
      i = last = step.end;
    }
  }
}

function special(scan: Scan, i: number, code: number): Step | undefined {
  switch (code) {
    case 92: return escape(scan, i);
    case 96: return codeSpan(scan, i, 96);
    case 42: case 95: case 126: return emphasis(scan, i, code);
    case 91: return link(scan, i, i);
    case 33: return scan.char(i + 1) === '[' ? link(scan, i, i + 1) : undefined;
    case 60: return angle(scan, i);
    case 35: return tagStep(scan, i);
    case 36: return codeSpan(scan, i, 36);
    case 38: return entity(scan, i);
    case 40: return refStep(scan, i);
    default: return bareUrl(scan, i);
  }
}

const PUNCTUATION = /[!-/:-@[-`{-~]/;

function escape(scan: Scan, i: number): Step | undefined {
  const next = scan.char(i + 1);
  if (next === '\n') return { text: '\n', end: i + 2 };
  return PUNCTUATION.test(next) ? { text: next, end: i + 2 } : undefined;
}

/** A code span (backticks) or inline math (dollars): the text between a run and the next run of its length, raw. */
function codeSpan(scan: Scan, i: number, code: number): Step {
  const { src } = scan;
  const size = runLength(src, i, code, scan.end);
  const close = scan.runs(code).next(size, i + size);
  if (close === -1 || close + size > scan.end) return { text: src.slice(i, i + size), end: i + size };
  if (code === 36) return { text: src.slice(i + size, close), end: close + size };
  let inner = src.slice(i + size, close).replace(/\r?\n/g, ' ');
  if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ') && inner.trim() !== '') inner = inner.slice(1, -1);
  return { text: inner, end: close + size };
}

const WORD = /[\p{L}\p{N}]/u;

function emphasis(scan: Scan, i: number, code: number): Step {
  const { src } = scan;
  const size = runLength(src, i, code, scan.end);
  const run = src.slice(i, i + size);
  const before = scan.char(i - 1);
  const after = scan.char(i + size);
  // Underscores inside a word are text (snake_case); a run with space on both sides is text too.
  if (code === 95 && WORD.test(before) && WORD.test(after)) return { text: run, end: i + size };
  // The nearest same character either side: over all runs, these searches cover the text about once.
  const next = src.indexOf(run[0]!, i + size);
  const opens = after !== '' && !SPACE.test(after) && next !== -1 && next < scan.end;
  const closes = before !== '' && !SPACE.test(before) && src.lastIndexOf(run[0]!, i - 1) >= scan.start;
  return { text: opens || closes ? '' : run, end: i + size };
}

/** `[text](url)`, `[text][ref]`, `![alt](url)` → the text, read in place; `[^note]` → nothing; else no step. */
function link(scan: Scan, from: number, open: number): Step | undefined {
  const pairs = scan.pairs();
  const close = pairs.close(open, scan.end);
  if (close === -1) return undefined;
  const next = scan.char(close + 1);
  if (next === '(' || next === '[') {
    const end = pairs.close(close + 1, scan.end);
    if (end !== -1) return { text: '', end: end + 1, label: { start: open + 1, end: close } };
  }
  if (from === open && scan.src.charCodeAt(open + 1) === 94 /* ^ */ && close > open + 1) {
    const space = scan.nextWhitespace(open + 1);
    if (space === -1 || space >= close) return { text: '', end: close + 1 };
  }
  return undefined;
}

const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>/y;
const HTML_TAG = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/y;

/** An autolink → its address; an HTML tag or comment → nothing. A match past the part being read is no match. */
function angle(scan: Scan, i: number): Step | undefined {
  const { src } = scan;
  const autolink = matchAt(AUTOLINK, src, i);
  if (autolink) return autolink.end <= scan.end ? { text: autolink.parts[1]!, end: autolink.end } : undefined;
  const tag = matchAt(HTML_TAG, src, i);
  if (tag) return tag.end <= scan.end ? { text: '', end: tag.end } : undefined;
  if (!src.startsWith('<!--', i)) return undefined;
  const close = scan.nextCommentEnd(i + 4);
  return close !== -1 && close + 3 <= scan.end ? { text: '', end: close + 3 } : undefined;
}

const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z][a-zA-Z0-9]{1,31}));/y;
const NAMED = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', '\u00a0']]);

function entity(scan: Scan, i: number): Step | undefined {
  const match = matchAt(ENTITY, scan.src, i);
  if (!match || match.end > scan.end) return undefined;
  const [, decimal, hex, name] = match.parts;
  const point = decimal ? Number(decimal) : hex ? Number.parseInt(hex, 16) : undefined;
  const text = point !== undefined ? (point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : '\ufffd') : NAMED.get(name!);
  return text === undefined ? undefined : { text, end: match.end };
}

function refStep(scan: Scan, i: number): Step | undefined {
  const match = scan.char(i + 1) === '(' ? matchAt(REF, scan.src, i) : undefined;
  if (!match || match.end > scan.end) return undefined;
  return { text: match.parts[2] || match.parts[3] || match.parts[1]!, end: match.end };
}

/** A bare web address is kept whole: its `#`, `_` or `*` are no tag or emphasis (the web app links it whole). */
const EMPHASIS_MARK = /[*_~=]/;

/**
 * A bare web address, kept whole: after a blank or at the start, or right inside emphasis markers
 * that are (`**https://…#top**`, which the web app links too); a closing run like the opening one is
 * not part of it.
 */
function bareUrl(scan: Scan, i: number): Step | undefined {
  let from = i;
  while (from > scan.start && EMPHASIS_MARK.test(scan.char(from - 1))) from--;
  const opened = from !== i && (from === scan.start || SPACE.test(scan.char(from - 1)));
  let end = bareUrlEnd(scan.src, i, opened ? i : scan.start, scan.end);
  if (end === -1) return undefined;
  const marks = scan.src.slice(from, i);
  if (opened && end - i > marks.length && scan.src.endsWith(marks, end)) end -= marks.length;
  return { text: scan.src.slice(i, end), end };
}

function tagStep(scan: Scan, i: number): Step | undefined {
  return tagAt(scan.src, i, scan.end);
}
