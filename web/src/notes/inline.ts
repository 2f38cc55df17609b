import { h, type ComponentChildren } from 'preact';

/**
 * A block's inline Markdown as Preact nodes, never as HTML: every piece of note text becomes a text
 * node, so nothing in a note can run (`<script>`, `onerror=`, an SVG are shown as the characters they
 * are). Links keep only http(s), mailto and in-app targets; images only the workspace's own files.
 * Covers what Quire writes: strong, emphasis, strike, code, links, images, autolinks, references
 * `((id "anchor"))`, tags `#tag#`, inline math `$…$`, escapes and hard breaks.
 */
export interface InlineContext {
  /** The in-app address of a block (its document, scrolled to it). */
  blockHref(id: string): string;
  tagHref(tag: string): string;
}

const SAFE_URL = /^(?:https?:|mailto:)/i;
const REF = /^\(\((\d{14}-[0-9a-z]{7})(?:[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'))?\)\)/;
const TAG = /^#([^#\s`][^#\n`]*?)#/;
// The address and title are bounded: unbounded, `[](` repeated scanned to the end of the text from every opener.
// The address is `<…>` or a run without blanks whose parentheses pair (`https://en.wikipedia.org/wiki/Foo_(bar)`).
const LINK = /^(!?)\[((?:\\.|[^\]\\])*)\]\(\s{0,64}(?:<([^<>\n]{0,2048})>|((?:[^()\s<>]|\([^()\s<>]{0,256}\)){0,2048}))(?:\s{1,64}"[^"]{0,2048}")?\s{0,64}\)/;
const AUTOLINK = /^<(https?:\/\/[^>\s]+|mailto:[^>\s]+)>/i;
const BARE_URL = /^https?:\/\/[^\s<]+[^\s<.,;:!?)\]'"]/i;

export function renderInline(text: string, context: InlineContext): ComponentChildren[] {
  return parse(text, context, 0, false);
}

/** `inLink`: a link's label, where no other link, reference, tag or address becomes one (a link in a link). */
function parse(text: string, context: InlineContext, depth: number, inLink: boolean): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  // Per marker, the position from which no closing marker can be found: later openers are not searched
  // again (a paragraph of `*a *a *a …` would otherwise take time quadratic in its length).
  const noClose = new Map<string, number>();
  // The same for links, autolinks and code spans: an opener before the point where a failed one's
  // search stopped would search the same text and fail the same way (`[[[[…` or `<http://<http://…`
  // without a close would otherwise take time quadratic in the length, and freeze the tab).
  let linkFailsBefore = -1;
  let autolinkFailsBefore = -1;
  let ticks: TickRuns | undefined;
  let plain = '';
  const flush = (): void => {
    if (plain !== '') out.push(plain);
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '\n') {
      flush();
      out.push(h('br', null));
      i++;
      continue;
    }
    let match: RegExpExecArray | null;
    if (c === '`') {
      let length = 1;
      while (text[i + length] === '`') length++;
      ticks ??= new TickRuns(text);
      const close = ticks.next(length, i + length);
      if (close !== -1) {
        flush();
        out.push(h('code', null, text.slice(i + length, close).replace(/^ (.*) $/s, '$1')));
        i = close + length;
        continue;
      }
      // A run without a close is text, whole: its shorter tails are not openers of their own.
      plain += text.slice(i, i + length);
      i += length;
      continue;
    }
    if (c === '(' && !inLink && (match = REF.exec(rest))) {
      flush();
      const anchor = match[2] ?? match[3] ?? match[1]!;
      out.push(h('a', { class: 'ref', href: context.blockHref(match[1]!), 'data-ref': match[1] }, anchor));
      i += match[0].length;
      continue;
    }
    // A tag does not run into a reference (an anchor's `#`, `((id "Note#Goals"))`, ends no tag) nor into code, nor ends at an escaped `#`, as the index reads them.
    if (c === '#' && !inLink && (match = TAG.exec(rest)) && !/\s$/.test(match[1]!) && !/(?<!\\)(?:\\\\)*\\$/.test(match[1]!) && !/\(\(\d{14}-[0-9a-z]{7}/.test(match[1]!)) {
      flush();
      out.push(h('a', { class: 'tag', href: context.tagHref(match[1]!) }, `#${match[1]}`));
      i += match[0].length;
      continue;
    }
    if ((c === '[' && !inLink) || (c === '!' && text[i + 1] === '[')) {
      const bracket = c === '[' ? i : i + 1;
      // A label opened before where the last failed one ended ends there too, with the same text after it.
      const known = bracket < linkFailsBefore && !escaped(text, bracket);
      if (!known && (match = LINK.exec(rest))) {
        flush();
        out.push(link(match[1] === '!', match[2]!, match[3] ?? match[4]!, context, depth));
        i += match[0].length;
        continue;
      }
      if (!known) linkFailsBefore = labelEnd(text, bracket + 1);
    }
    if (c === '<' && !inLink && i >= autolinkFailsBefore) {
      if ((match = AUTOLINK.exec(rest))) {
        flush();
        out.push(h('a', { href: match[1], rel: 'noopener noreferrer', target: '_blank' }, match[1]));
        i += match[0].length;
        continue;
      }
      autolinkFailsBefore = autolinkEnd(text, i);
    }
    if ((c === 'h' || c === 'H') && !inLink && (i === 0 || /\s/.test(text[i - 1]!)) && (match = BARE_URL.exec(rest))) {
      flush();
      out.push(h('a', { href: match[0], rel: 'noopener noreferrer', target: '_blank' }, match[0]));
      i += match[0].length;
      continue;
    }
    if (c === '$' && text[i + 1] !== '$') {
      const close = text.indexOf('$', i + 1);
      if (close > i + 1 && !/\s/.test(text[i + 1]!) && !/\s/.test(text[close - 1]!)) {
        flush();
        out.push(h('code', { class: 'math' }, text.slice(i + 1, close)));
        i = close + 1;
        continue;
      }
    }
    const emphasis = depth < 8 ? emphasisAt(text, i, noClose) : undefined;
    if (emphasis) {
      flush();
      out.push(h(emphasis.tag, null, ...parse(emphasis.inner, context, depth + 1, inLink)));
      i = emphasis.end;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

/** Whether the character at `at` is escaped: an odd run of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let run = 0;
  while (at - run - 1 >= 0 && text[at - run - 1] === '\\') run++;
  return run % 2 === 1;
}

/**
 * Where LINK's label, opened just before `from`, stops: its first `]` not escaped, or a backslash it
 * cannot take (before a line break), or the end.
 */
function labelEnd(text: string, from: number): number {
  for (let at = from; at < text.length; at++) {
    const c = text[at]!;
    if (c === ']') return at;
    if (c === '\\') {
      if (at + 1 >= text.length || /[\n\r\u2028\u2029]/.test(text[at + 1]!)) return at;
      at++;
    }
  }
  return text.length;
}

/** Where AUTOLINK's address, opened at `at`, stops: the first `>` or space after its scheme (none: at). */
function autolinkEnd(text: string, at: number): number {
  const scheme = /^<(?:https?:\/\/|mailto:)/i.exec(text.slice(at, at + 9));
  if (!scheme) return at;
  const stop = /[>\s]/g;
  stop.lastIndex = at + scheme[0].length;
  return stop.exec(text)?.index ?? text.length;
}

function link(image: boolean, label: string, href: string, context: InlineContext, depth: number): ComponentChildren {
  const text = label.replace(/\\(.)/g, '$1');
  if (image) {
    // Only the workspace's own files are shown; an image from elsewhere would tell another site the note was read.
    return /^assets\/[^/?#][^?#]*$/.test(href) && !href.includes('..') ? h('img', { 'data-asset': href, 'data-alt': text, alt: text, class: 'asset' }) : h('span', { class: 'image-off' }, `[image: ${text || href}]`);
  }
  if (SAFE_URL.test(href)) return h('a', { href, rel: 'noopener noreferrer', target: '_blank' }, ...parse(label, context, depth + 1, true));
  if (/^#\//.test(href)) return h('a', { href }, ...parse(label, context, depth + 1, true));
  // javascript:, data:, relative paths: shown as text with the target, never followed.
  return h('span', { class: 'link-off', title: href }, ...parse(label, context, depth + 1, true));
}

/**
 * Where each run of backticks starts, by its length: a code span closes at the next run of exactly
 * its opener's length (CommonMark), found here without searching the text again from each opener (runs
 * of falling lengths, each searching the rest of the text, took 10 s for 300 KB and froze the tab).
 */
class TickRuns {
  private readonly starts = new Map<number, number[]>();
  /** Per length, the first start not yet passed: asked with `from` that never decreases, each list is walked once. */
  private readonly cursor = new Map<number, number>();

  constructor(text: string) {
    for (let at = text.indexOf('`'); at !== -1;) {
      let end = at + 1;
      while (text[end] === '`') end++;
      const list = this.starts.get(end - at);
      if (list) list.push(at);
      else this.starts.set(end - at, [at]);
      at = text.indexOf('`', end);
    }
  }

  /** The start of the first run of `length` backticks at or after `from`, or -1. */
  next(length: number, from: number): number {
    const list = this.starts.get(length);
    if (!list) return -1;
    let k = this.cursor.get(length) ?? 0;
    while (k < list.length && list[k]! < from) k++;
    this.cursor.set(length, k);
    return k < list.length ? list[k]! : -1;
  }
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;
const EMPHASIS: [string, string][] = [['**', 'strong'], ['__', 'strong'], ['~~', 'del'], ['==', 'mark'], ['*', 'em'], ['_', 'em']];

function emphasisAt(text: string, i: number, noClose: Map<string, number>): { tag: string; inner: string; end: number } | undefined {
  for (const [marker, tag] of EMPHASIS) {
    if (!text.startsWith(marker, i) || /\s/.test(text[i + marker.length] ?? ' ')) continue;
    // Underscores inside a word are text (CommonMark), in any script: `_config`, `中文_变量`.
    if (marker[0] === '_' && i > 0 && WORD_CHAR.test(text[i - 1]!)) continue;
    if (i >= (noClose.get(marker) ?? Infinity)) continue;
    let close = text.indexOf(marker, i + marker.length + 1);
    // Whether a marker closes depends on it alone (what is before and after it), not on the opener.
    while (close !== -1 && (/\s/.test(text[close - 1]!) || (marker.length === 1 && text[close + 1] === marker) || (marker[0] === '_' && WORD_CHAR.test(text[close + marker.length] ?? '')))) close = text.indexOf(marker, close + 2);
    if (close === -1) {
      noClose.set(marker, i);
      continue;
    }
    return { tag, inner: text.slice(i + marker.length, close), end: close + marker.length };
  }
  return undefined;
}
