/**
 * What the inline scanners (inline-syntax.ts, inline-plain.ts) share: patterns, and indexes built once
 * per text so that no position of the text is searched from again and again. Content is untrusted and
 * can be a megabyte: a search forward from every `[`, `<!--` or backtick run for its closer takes time
 * quadratic in the text (60 KB of `[` held the event loop for seconds), so each closer is found once.
 */

export const REF = /\(\((\d{14}-[0-9a-z]{7})(?:[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'))?\)\)/y;
export const SPACE = /\s/;
const URL_SCHEME = /^https?:\/\//i;
const URL_STOP = /[\s<]/;
const URL_TRAILING = /[.,;:!?)\]'"]/;

/**
 * Where a web address written bare at `i` ends, not past `end` (-1 when none starts there), as the
 * web app links one: after a blank or at the start, `http(s)://`, a run without blanks or `<`, less
 * its trailing punctuation. Each character is looked at once: a call that finds none stops at a blank.
 */
export function bareUrlEnd(src: string, i: number, start: number, end: number): number {
  if (i !== start && !SPACE.test(src.charAt(i - 1))) return -1;
  const scheme = URL_SCHEME.exec(src.slice(i, i + 8));
  if (!scheme) return -1;
  const body = i + scheme[0].length;
  let stop = body;
  while (stop < end && !URL_STOP.test(src.charAt(stop))) stop++;
  while (stop > body + 1 && URL_TRAILING.test(src.charAt(stop - 1))) stop--;
  return stop > body + 1 ? stop : -1;
}

export function matchAt(pattern: RegExp, src: string, i: number): { parts: (string | undefined)[]; end: number } | undefined {
  pattern.lastIndex = i;
  const match = pattern.exec(src);
  return match ? { parts: match, end: i + match[0].length } : undefined;
}

export function isEscaped(src: string, i: number): boolean {
  let slashes = 0;
  while (src.charCodeAt(i - 1 - slashes) === 92) slashes++;
  return slashes % 2 === 1;
}

/** The length of the run of `code` characters at `i`, not past `end`. */
export function runLength(src: string, i: number, code: number, end = src.length): number {
  let at = i;
  while (at < end && src.charCodeAt(at) === code) at++;
  return at - i;
}

const REF_START = /\(\(\d{14}-[0-9a-z]{7}/;

/** `#text#` at `i`, closed before `end`: text non-empty, on one line, without `#` or a backtick, not starting or ending with space; `\#` closes nothing. */
export function tagAt(src: string, i: number, end = src.length): { text: string; end: number } | undefined {
  const close = src.indexOf('#', i + 1);
  if (close <= i + 1 || close >= end || isEscaped(src, close)) return undefined;
  const text = src.slice(i + 1, close);
  // The space rule keeps `C# and F#` from being read as a tag.
  if (text.includes('\n') || SPACE.test(text.charAt(0)) || SPACE.test(text.charAt(text.length - 1))) return undefined;
  // A tag does not run into a reference (its anchor's `#` is no tag's end).
  if (text.includes('((') && REF_START.test(text)) return undefined;
  // Nor into code: a backtick's span is read before a tag (CommonMark), and the web app follows the same rule.
  if (text.includes('`')) return undefined;
  return { text, end: close + 1 };
}

/**
 * The maximal runs of one character (backticks, dollars) by length. A code span closes at the next
 * run of exactly its opener's length; asking the index costs a binary search where scanning every
 * later run, from every opener that has no closer, took time quadratic in the number of runs.
 */
export class Runs {
  private readonly starts = new Map<number, number[]>();

  constructor(src: string, code: number) {
    const char = String.fromCharCode(code);
    for (let at = src.indexOf(char); at !== -1;) {
      const size = runLength(src, at, code);
      let list = this.starts.get(size);
      if (!list) this.starts.set(size, (list = []));
      list.push(at);
      at = src.indexOf(char, at + size);
    }
  }

  /** Where the first run of exactly `size` starting at or after `from` starts; -1 when none. */
  next(size: number, from: number): number {
    const list = this.starts.get(size);
    if (!list) return -1;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (list[middle]! < from) low = middle + 1;
      else high = middle;
    }
    return low < list.length ? list[low]! : -1;
  }
}

/**
 * The closing `]` of every `[` and `)` of every `(`, found in one pass with a stack each. The same
 * pairs as counting depth forward from each opener (escapes skipped alike): the closer that pops an
 * opener is the first where the count returns to zero. For a part of the text (a link's label), a
 * pair whose closer lies outside the part has no closer inside it.
 */
export class Pairs {
  private readonly closer: Int32Array;

  constructor(src: string) {
    this.closer = new Int32Array(src.length).fill(-1);
    const brackets: number[] = [];
    const parens: number[] = [];
    for (let i = 0; i < src.length; i++) {
      const code = src.charCodeAt(i);
      if (code === 92) i++;
      else if (code === 91) brackets.push(i);
      else if (code === 40) parens.push(i);
      else if (code === 93) { const open = brackets.pop(); if (open !== undefined) this.closer[open] = i; }
      else if (code === 41) { const open = parens.pop(); if (open !== undefined) this.closer[open] = i; }
    }
  }

  /** The closer of the opener at `open` if it comes before `end`; -1 otherwise. */
  close(open: number, end: number): number {
    const at = this.closer[open] ?? -1;
    return at < end ? at : -1;
  }
}

/**
 * `indexOf` for a caller whose starting points only move forward (or stay within the last answer):
 * each part of the text is searched once, however many `<!--` wait for their `-->`.
 */
export class Ahead {
  private from = Number.POSITIVE_INFINITY;
  private found = -1;

  constructor(private readonly src: string, private readonly needle: string | RegExp) {}

  next(from: number): number {
    const known = from >= this.from && (this.found === -1 || from <= this.found);
    if (!known) {
      this.from = from;
      this.found = this.search(from);
    }
    return this.found;
  }

  private search(from: number): number {
    if (typeof this.needle === 'string') return this.src.indexOf(this.needle, from);
    this.needle.lastIndex = from;
    return this.needle.exec(this.src)?.index ?? -1;
  }
}
