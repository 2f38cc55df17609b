/**
 * The inline scanner as it was before issue 13 (point 4), kept only as an oracle: the linear scanner
 * that replaced it must give the same plain text on every input this one can finish. (References and
 * tags follow the web app now, and inline-marks.test.ts checks them against it.)
 * It takes time quadratic in the nesting of `[` and may overflow the stack on nested links, so tests
 * call it on short inputs only. Do not use it elsewhere.
 */
import type { Block, DraftBlock } from '../../../plugins/blocks/block-model.js';

const REF = /\(\((\d{14}-[0-9a-z]{7})(?:[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'))?\)\)/y;

export function plainText(block: Block | DraftBlock): string {
  const content = block.content ?? '';
  switch (block.type) {
    case 'paragraph':
    case 'heading': return inlineToPlain(content);
    case 'table': return tableToPlain(content);
    case 'html': return content.replace(/<!--[\s\S]*?-->|<[^>]*>/g, ' ').replace(/[ \t]+/g, ' ').trim();
    // Code, math, an embed's target and a document's title are already the text to search.
    default: return content;
  }
}

/** A replacement for the source from the current position up to `end`. */
interface Step {
  text: string;
  end: number;
}

const SPECIAL = new Uint8Array(128);
for (const c of '\\`*_~[!<#$&(hH') SPECIAL[c.charCodeAt(0)] = 1;
const HAS_SPECIAL = /[\\`*_~[!<#$&(]/;

/** Inline Markdown → its words: markers, URLs and tags' `#` dropped, code and math kept raw. */
export function inlineToPlain(src: string): string {
  if (!HAS_SPECIAL.test(src)) return src;
  let out = '';
  let last = 0;
  for (let i = 0; i < src.length;) {
    const code = src.charCodeAt(i);
    const step = code < 128 && SPECIAL[code] === 1 ? special(src, i, code) : undefined;
    if (!step) {
      i++;
      continue;
    }
    out += src.slice(last, i) + step.text;
    i = last = step.end;
  }
  return out + src.slice(last);
}

function special(src: string, i: number, code: number): Step | undefined {
  switch (code) {
    case 92: return escape(src, i);
    case 96: return codeSpan(src, i);
    case 42: case 95: case 126: return emphasis(src, i, code);
    case 91: return link(src, i, i);
    case 33: return src.charCodeAt(i + 1) === 91 ? link(src, i, i + 1) : undefined;
    case 60: return angle(src, i);
    case 35: return tagStep(src, i);
    case 36: return inlineMath(src, i);
    case 38: return entity(src, i);
    case 40: return refStep(src, i);
    default: return bareUrl(src, i);
  }
}

const PUNCTUATION = /[!-/:-@[-`{-~]/;

function escape(src: string, i: number): Step | undefined {
  const next = src.charAt(i + 1);
  if (next === '\n') return { text: '\n', end: i + 2 };
  return PUNCTUATION.test(next) ? { text: next, end: i + 2 } : undefined;
}

function codeSpan(src: string, i: number): Step {
  const size = runLength(src, i, 96);
  const close = closingRun(src, i + size, size, 96);
  if (close === -1) return { text: src.slice(i, i + size), end: i + size };
  let inner = src.slice(i + size, close).replace(/\r?\n/g, ' ');
  if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ') && inner.trim() !== '') inner = inner.slice(1, -1);
  return { text: inner, end: close + size };
}

function inlineMath(src: string, i: number): Step {
  const size = runLength(src, i, 36);
  const close = closingRun(src, i + size, size, 36);
  if (close === -1) return { text: src.slice(i, i + size), end: i + size };
  return { text: src.slice(i + size, close), end: close + size };
}

const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;

function emphasis(src: string, i: number, code: number): Step {
  const size = runLength(src, i, code);
  const run = src.slice(i, i + size);
  const before = src.charAt(i - 1);
  const after = src.charAt(i + size);
  // Underscores inside a word are text (snake_case); a run with space on both sides is text too.
  if (code === 95 && WORD.test(before) && WORD.test(after)) return { text: run, end: i + size };
  const opens = after !== '' && !SPACE.test(after) && src.indexOf(run[0]!, i + size) !== -1;
  const closes = before !== '' && !SPACE.test(before) && src.lastIndexOf(run[0]!, i - 1) !== -1;
  return { text: opens || closes ? '' : run, end: i + size };
}

/** `[text](url)`, `[text][ref]`, `![alt](url)` → the text; `[^note]` → nothing; else no step. */
function link(src: string, from: number, open: number): Step | undefined {
  const close = matching(src, open, 91, 93);
  if (close === -1) return undefined;
  const label = src.slice(open + 1, close);
  const next = src.charCodeAt(close + 1);
  if (next === 40 /* ( */) {
    const end = matching(src, close + 1, 40, 41);
    if (end !== -1) return { text: inlineToPlain(label), end: end + 1 };
  } else if (next === 91 /* [ */) {
    const end = matching(src, close + 1, 91, 93);
    if (end !== -1) return { text: inlineToPlain(label), end: end + 1 };
  }
  if (from === open && label.startsWith('^') && !/\s/.test(label)) return { text: '', end: close + 1 };
  return undefined;
}

const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>/y;
const HTML_TAG = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>|<!--[\s\S]*?-->/y;

function angle(src: string, i: number): Step | undefined {
  const autolink = matchAt(AUTOLINK, src, i);
  if (autolink) return { text: autolink.parts[1]!, end: autolink.end };
  const tag = matchAt(HTML_TAG, src, i);
  return tag ? { text: '', end: tag.end } : undefined;
}

const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z][a-zA-Z0-9]{1,31}));/y;
const NAMED = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', '\u00a0']]);

function entity(src: string, i: number): Step | undefined {
  const match = matchAt(ENTITY, src, i);
  if (!match) return undefined;
  const [, decimal, hex, name] = match.parts;
  const point = decimal ? Number(decimal) : hex ? Number.parseInt(hex, 16) : undefined;
  const text = point !== undefined ? (point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : '\ufffd') : NAMED.get(name!);
  return text === undefined ? undefined : { text, end: match.end };
}

function refStep(src: string, i: number): Step | undefined {
  const match = src.charCodeAt(i + 1) === 40 ? matchAt(REF, src, i) : undefined;
  if (!match) return undefined;
  return { text: match.parts[2] || match.parts[3] || match.parts[1]!, end: match.end };
}

/**
 * A later rule: a bare web address (at the start or after a blank, or right inside emphasis markers
 * that are) is kept whole, without a closing run like the opening one.
 */
function bareUrl(src: string, i: number): Step | undefined {
  const marks = /[*_~=]*$/.exec(src.slice(0, i))![0];
  const from = i - marks.length;
  if (from > 0 && !/\s/.test(src.charAt(from - 1))) return undefined;
  const match = /^https?:\/\/[^\s<]+[^\s<.,;:!?)\]'"]/i.exec(src.slice(i));
  if (!match) return undefined;
  const text = marks !== '' && match[0].length > marks.length && match[0].endsWith(marks) ? match[0].slice(0, -marks.length) : match[0];
  return { text, end: i + text.length };
}

function tagStep(src: string, i: number): Step | undefined {
  const tag = tagAt(src, i);
  return tag ? { text: tag.text, end: tag.end } : undefined;
}

/** `#text#` at `i`: text non-empty, on one line, without `#`, not starting or ending with space; `\#` closes nothing. */
function tagAt(src: string, i: number): Step | undefined {
  const close = src.indexOf('#', i + 1);
  if (close <= i + 1 || isEscaped(src, close)) return undefined;
  const text = src.slice(i + 1, close);
  // The space rule keeps `C# and F#` from being read as a tag.
  if (text.includes('\n') || SPACE.test(text.charAt(0)) || SPACE.test(text.charAt(text.length - 1))) return undefined;
  // Nor does a tag run into a reference.
  if (/\(\(\d{14}-[0-9a-z]{7}/.test(text)) return undefined;
  // Nor into code (a later rule: a tag's text holds no backtick).
  if (text.includes('`')) return undefined;
  return { text, end: close + 1 };
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

function isEscaped(src: string, i: number): boolean {
  let slashes = 0;
  while (src.charCodeAt(i - 1 - slashes) === 92) slashes++;
  return slashes % 2 === 1;
}

function runLength(src: string, i: number, code: number): number {
  let end = i;
  while (src.charCodeAt(end) === code) end++;
  return end - i;
}

/** Where the next run of exactly `size` `code` characters starts, from `from`; -1 when none. */
function closingRun(src: string, from: number, size: number, code: number): number {
  const char = String.fromCharCode(code);
  for (let j = src.indexOf(char, from); j !== -1;) {
    const length = runLength(src, j, code);
    if (length === size) return j;
    j = src.indexOf(char, j + length);
  }
  return -1;
}

/** The index of the bracket closing the one at `open`, skipping nested pairs and escapes. */
function matching(src: string, open: number, opener: number, closer: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const code = src.charCodeAt(i);
    if (code === 92) i++;
    else if (code === opener) depth++;
    else if (code === closer && --depth === 0) return i;
  }
  return -1;
}

function matchAt(pattern: RegExp, src: string, i: number): { parts: (string | undefined)[]; end: number } | undefined {
  pattern.lastIndex = i;
  const match = pattern.exec(src);
  return match ? { parts: match, end: i + match[0].length } : undefined;
}
