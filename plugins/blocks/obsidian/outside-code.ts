/**
 * Rewrites the prose of a Markdown note and leaves everything else alone: fenced code blocks (``` and
 * ~~~), `$$` math blocks, Obsidian comments (`%% … %%`, on one line or many), inline code spans, inline
 * math (`$…$`) and HTML tags (not a link's `<destination>`) pass through byte for byte, so a `[[link]]` or `#tag` shown as code, a
 * colour in a `<span style="color: #f00">`, a `$a #b$` or a comment stays as it was. Works line by line,
 * as Obsidian's own link and tag scanners do, in time linear in the line.
 */
/**
 * `tableRow`: the line is a row of a table (it starts with `|`), where a `|` of a link must be escaped.
 * `lineEnd`: the prose runs to the line's end (nothing kept after it).
 */
export type ProseRewrite = (prose: string, context: { lineStart: boolean; wholeLine: boolean; tableRow: boolean; lineEnd: boolean }) => string;

/** `comments: false`: plain Markdown, where `%%` is text (`50%% off`), not an Obsidian comment. */
export function mapOutsideCode(text: string, rewrite: ProseRewrite, options: { comments?: boolean } = {}): string {
  const comments = options.comments !== false;
  // Lines end at `\n`; a `\r` before it (a note saved on Windows) is no part of a fence's line.
  const lines = text.split('\n');
  let fence: { char: string; length: number } | undefined;
  let math = false;
  let comment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (comment) {
      const close = line.indexOf('%%');
      if (close === -1) continue;
      comment = false;
      const mapped = mapLine(line.slice(close + 2), rewrite, false, comments);
      comment = mapped.commentOpen;
      lines[i] = line.slice(0, close + 2) + mapped.text;
      continue;
    }
    const bare = line.replace(/^(?:[ \t]*>)*[ \t]*/, '');
    if (fence) {
      const close = /^(`{3,}|~{3,})[ \t]*\r?$/.exec(bare);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = undefined;
      continue;
    }
    if (math) {
      if (bare.trimEnd().endsWith('$$')) math = false;
      continue;
    }
    // A run of backticks opens a fence only when no backtick follows on its line (```` ```c`` is code ````
    // is a paragraph's code span), and `$$` a math block only when no `$` does: taken for fences, such
    // lines left every link and tag after them unconverted.
    const open = /^(?:(`{3,})[^`]*$|(~{3,}))/.exec(bare);
    if (open) {
      const run = open[1] ?? open[2]!;
      fence = { char: run[0]!, length: run.length };
      continue;
    }
    if (bare.startsWith('$$')) {
      const trimmed = bare.trimEnd();
      const oneLine = trimmed.length > 3 && trimmed.endsWith('$$');
      if (oneLine) continue;
      if (!/^\$+[^$]*$/.test(trimmed)) {
        const mapped = mapLine(line, rewrite, true, comments);
        comment = mapped.commentOpen;
        lines[i] = mapped.text;
        continue;
      }
      math = true;
      continue;
    }
    const mapped = mapLine(line, rewrite, true, comments);
    comment = mapped.commentOpen;
    lines[i] = mapped.text;
  }
  return lines.join('\n');
}

/**
 * One line: the prose between the spans left alone is rewritten. `commentOpen`: the line opens a
 * comment it does not close (it runs on to the next `%%`).
 */
function mapLine(line: string, rewrite: ProseRewrite, startsLine: boolean, comments: boolean): { text: string; commentOpen: boolean } {
  const { spans, commentOpen } = keptSpans(line, comments);
  const tableRow = /^(?:[ \t]*>)*[ \t]*\|/.test(line);
  let out = '';
  let from = 0;
  for (const [start, end] of spans) {
    out += rewrite(line.slice(from, start), { lineStart: startsLine && from === 0, wholeLine: false, tableRow, lineEnd: false }) + line.slice(start, end);
    from = end;
  }
  if (from < line.length || spans.length === 0) {
    const whole = startsLine && from === 0;
    out += rewrite(line.slice(from), { lineStart: whole, wholeLine: whole, tableRow, lineEnd: true });
  }
  return { text: out, commentOpen };
}

/**
 * The spans of a line to leave as they are, in order. A code span is `n` backticks to the next run of
 * exactly `n` (each run is found once and looked up by its length: searching the rest of the line for
 * every opening run took time growing as n^1.5 on a line of runs of distinct lengths); outside code
 * spans, a comment runs from `%%` to the next `%%` (or the line's end, and on), inline math from a `$`
 * followed by a non-blank to the next `$` after a non-blank and before no digit, an HTML tag from `<`
 * and a letter (or `/`) to the next `>`.
 */
function keptSpans(line: string, obsidianComments: boolean): { spans: [number, number][]; commentOpen: boolean } {
  const spans: [number, number][] = [];
  if (!/[`%$<]/.test(line)) return { spans, commentOpen: false };
  const code = codeSpans(line);
  let next = 0;
  const comments = { next: 0 };
  for (let i = 0; i < line.length;) {
    const span = code[next];
    if (span !== undefined && i >= span[0]) {
      spans.push(span);
      i = span[1];
      next++;
      continue;
    }
    const limit = span?.[0] ?? line.length;
    const c = line.charCodeAt(i);
    if (obsidianComments && c === 37 /* % */ && line.charCodeAt(i + 1) === 37) {
      const close = line.indexOf('%%', i + 2);
      if (close === -1) {
        spans.push([i, line.length]);
        return { spans, commentOpen: true };
      }
      spans.push([i, close + 2]);
      // A comment hides code spans too: those it covers are skipped.
      while (code[next] !== undefined && code[next]![0] < close + 2) next++;
      i = close + 2;
      continue;
    }
    if (c === 36 /* $ */ && line.charCodeAt(i + 1) !== 36 && !isBlank(line.charCodeAt(i + 1)) && line.charCodeAt(i - 1) !== 92 /* \ */) {
      const close = line.indexOf('$', i + 1);
      if (close !== -1 && close < limit && !isBlank(line.charCodeAt(close - 1)) && !isDigit(line.charCodeAt(close + 1))) {
        spans.push([i, close + 1]);
        i = close + 1;
        continue;
      }
    }
    // An HTML tag as CommonMark reads one (`<span style="color: #f00">`, `</span>`, `<!-- … -->`), not
    // a `<` in prose (`x<y then [[Link]] and z>w`), nor a link's `<destination>`.
    if (c === 60 /* < */ && !(line.charCodeAt(i - 1) === 40 /* ( */ && line.charCodeAt(i - 2) === 93 /* ] */)) {
      const end = htmlTagEnd(line, i, comments);
      if (end !== -1 && end <= limit) {
        spans.push([i, end]);
        i = end;
        continue;
      }
    }
    i++;
  }
  return { spans, commentOpen: false };
}

/** Inline code spans: `n` backticks to the next run of exactly `n`; a run with no partner is text. */
function codeSpans(line: string): [number, number][] {
  const runs: { at: number; length: number }[] = [];
  for (let i = line.indexOf('`'); i !== -1 && i < line.length; i = line.indexOf('`', i)) {
    let length = 1;
    while (line.charCodeAt(i + length) === 96) length++;
    runs.push({ at: i, length });
    i += length;
  }
  if (runs.length < 2) return [];
  // For each length, the indexes of its runs in order, and how far they have been passed.
  const byLength = new Map<number, { indexes: number[]; passed: number }>();
  runs.forEach((run, index) => {
    const entry = byLength.get(run.length) ?? { indexes: [], passed: 0 };
    entry.indexes.push(index);
    byLength.set(run.length, entry);
  });
  const spans: [number, number][] = [];
  for (let k = 0; k < runs.length;) {
    const open = runs[k]!;
    const same = byLength.get(open.length)!;
    while (same.passed < same.indexes.length && same.indexes[same.passed]! <= k) same.passed++;
    if (same.passed === same.indexes.length) {
      k++;
      continue;
    }
    const closeIndex = same.indexes[same.passed]!;
    const close = runs[closeIndex]!;
    spans.push([open.at, close.at + close.length]);
    k = closeIndex + 1;
  }
  return spans;
}

const isBlank = (c: number): boolean => c === 32 || c === 9 || Number.isNaN(c);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isSpace = (c: number): boolean => c === 32 || c === 9;

/**
 * Where the HTML tag starting at `at` (a `<`) ends (just past its `>`), or -1 when it is none: an open
 * tag (a name, attributes with unquoted, single- or double-quoted values, an optional `/`), a closing
 * tag or a comment, as CommonMark's inline HTML; on one line. Stops at the first character no tag may
 * hold there, so a failed attempt reads no further than the next `<` or quote's partner.
 */
function htmlTagEnd(line: string, at: number, comments: { next: number }): number {
  let i = at + 1;
  if (line.startsWith('!--', i)) {
    // The next `-->` is remembered: searched for from every `<!--` again, a line of them took the square.
    if (comments.next !== -1 && comments.next < i + 3) comments.next = line.indexOf('-->', i + 3);
    return comments.next === -1 ? -1 : comments.next + 3;
  }
  const closing = line.charCodeAt(i) === 47 /* / */;
  if (closing) i++;
  if (!isLetter(line.charCodeAt(i))) return -1;
  while (isLetter(line.charCodeAt(i)) || isDigit(line.charCodeAt(i)) || line.charCodeAt(i) === 45 /* - */) i++;
  if (closing) {
    while (isSpace(line.charCodeAt(i))) i++;
    return line.charCodeAt(i) === 62 /* > */ ? i + 1 : -1;
  }
  for (;;) {
    const spaced = isSpace(line.charCodeAt(i));
    while (isSpace(line.charCodeAt(i))) i++;
    const c = line.charCodeAt(i);
    if (c === 62 /* > */) return i + 1;
    if (c === 47 /* / */) return line.charCodeAt(i + 1) === 62 ? i + 2 : -1;
    // An attribute: after a blank, a name of letters, digits and `_.:-`, then perhaps `=` and a value.
    if (!spaced || !(isLetter(c) || c === 95 /* _ */ || c === 58 /* : */)) return -1;
    while (isLetter(line.charCodeAt(i)) || isDigit(line.charCodeAt(i)) || '_.:-'.includes(line[i] ?? ' ')) i++;
    let j = i;
    while (isSpace(line.charCodeAt(j))) j++;
    if (line.charCodeAt(j) !== 61 /* = */) continue;
    j++;
    while (isSpace(line.charCodeAt(j))) j++;
    const quote = line.charCodeAt(j);
    if (quote === 34 /* " */ || quote === 39 /* ' */) {
      const close = line.indexOf(quote === 34 ? '"' : "'", j + 1);
      if (close === -1) return -1;
      i = close + 1;
    } else {
      const start = j;
      while (j < line.length && !isSpace(line.charCodeAt(j)) && !'"\'=<>`'.includes(line[j]!)) j++;
      if (j === start) return -1;
      i = j;
    }
  }
}
