import { h, type ComponentChildren } from 'preact';
import { renderInline, type InlineContext } from '../notes/inline.js';

/** Links in an answer lead where a note's do: a block to its document, a tag to a search. */
const CONTEXT: InlineContext = {
  blockHref: (id) => `#/block/${id}`,
  tagHref: (tag) => `#/search?q=${encodeURIComponent(`#${tag}#`)}`,
};

// Matched on the line with its trailing blanks cut: `\s*` on both sides of an optional word retried
// every split of a run of spaces (a line of a fence and 120,000 spaces took 8.9 s).
const FENCE = /^(`{3,}|~{3,}) *([\w+-]*)$/;
/** A line that closes a fence: its character, at least as many, nothing else. */
const closes = (line: string, fence: string): boolean => {
  const trimmed = line.trimEnd();
  return trimmed.length >= fence.length && trimmed.startsWith(fence) && [...trimmed].every((char) => char === fence[0]);
};
const HEADING = /^(#{1,6})\s+(.*)$/;
/** A list item: its indent, its marker, the blanks after it, its text. */
const ITEM = /^( *)([-*+]|\d{1,9}[.)])( +)(.*)$/;
/** Lists inside lists deeper than this show the rest of their item as text (a hostile answer nests thousands). */
const MAX_DEPTH = 8;

const inline = (text: string): ComponentChildren[] => renderInline(text, CONTEXT);

/**
 * An agent's answer as the Markdown it is written in: paragraphs, headings, lists (nested, and with
 * blank lines between items), code fences and quotes, with the notes' inline renderer inside (text
 * nodes only, so nothing in an answer runs, and links keep the same safe targets). It was shown as raw
 * Markdown. Linear: one pass over the lines at each of at most `MAX_DEPTH` levels of lists.
 */
export function renderAnswer(markdown: string): ComponentChildren[] {
  return blocks(markdown.split(/\r?\n/), 0);
}

function blocks(lines: readonly string[], depth: number): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let paragraph: string[] = [];
  let quote: string[] = [];
  const flush = (): void => {
    if (paragraph.length > 0) out.push(h('p', null, inline(paragraph.join('\n'))));
    if (quote.length > 0) out.push(h('blockquote', null, h('p', null, inline(quote.join('\n')))));
    paragraph = [];
    quote = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line.trimEnd());
    if (fence) {
      flush();
      const code: string[] = [];
      // To the closing fence of the same kind, or the end of the answer (a stopped answer's open fence).
      while (++i < lines.length && !closes(lines[i]!, fence[1]!)) code.push(lines[i]!);
      out.push(h('pre', { class: 'code' }, h('code', fence[2] ? { 'data-lang': fence[2] } : null, code.join('\n'))));
      continue;
    }
    if (line.trim() === '') { flush(); continue; }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      // Under the page's own headings: an answer's "#" is a section of the answer.
      out.push(h(`h${Math.min(6, heading[1]!.length + 2)}`, null, inline(heading[2]!)));
      continue;
    }
    const item = ITEM.exec(untab(line));
    if (item && item[1]!.length <= 3) {
      flush();
      const end = listEnd(lines, i);
      out.push(...lists(lines.slice(i, end).map(untab), depth));
      i = end - 1;
      continue;
    }
    if (line.startsWith('>')) {
      if (paragraph.length > 0) flush();
      quote.push(line.replace(/^>\s?/, ''));
      continue;
    }
    if (quote.length > 0) flush();
    paragraph.push(line);
  }
  flush();
  return out;
}

/**
 * Where a list that starts at `start` ends: it goes on over items, indented lines, and blank lines
 * followed by either (loose lists: "1. a", "", "2. b" was two lists, both numbered from 1).
 */
function listEnd(lines: readonly string[], start: number): number {
  let j = start + 1;
  while (j < lines.length) {
    const line = lines[j]!;
    if (line.trim() === '') {
      let k = j;
      while (k < lines.length && lines[k]!.trim() === '') k++;
      if (k < lines.length && (ITEM.test(untab(lines[k]!)) || /^\s{2,}\S/.test(lines[k]!))) { j = k; continue; }
      return j;
    }
    if (ITEM.test(untab(line)) || /^\s+\S/.test(line)) { j++; continue; }
    return j;
  }
  return j;
}

interface Item { ordered: boolean; number: number; lines: string[] }

/**
 * The lines of a list as lists: items at the first item's level, each with the lines under it (indented
 * to its text, or carried on lazily); items of another kind start another list.
 */
function lists(lines: readonly string[], depth: number): ComponentChildren[] {
  const items: Item[] = [];
  let column = 0;
  for (const line of lines) {
    const item = ITEM.exec(line);
    const current = items.at(-1);
    if (item && (!current || item[1]!.length < column)) {
      column = item[1]!.length + item[2]!.length + Math.min(item[3]!.length, 4);
      items.push({ ordered: /\d/.test(item[2]!), number: Number.parseInt(item[2]!, 10), lines: [item[4]!] });
      continue;
    }
    // Under the item: its own indent taken off (a line carried on lazily keeps what it has).
    current!.lines.push(line.slice(Math.min(column, line.length - line.trimStart().length)));
  }
  const out: ComponentChildren[] = [];
  for (let i = 0; i < items.length;) {
    const kind = items[i]!.ordered;
    let j = i;
    while (j < items.length && items[j]!.ordered === kind) j++;
    const shown = items.slice(i, j).map((item) => h('li', null, itemBody(item.lines, depth)));
    out.push(kind ? h('ol', items[i]!.number !== 1 ? { start: items[i]!.number } : null, shown) : h('ul', null, shown));
    i = j;
  }
  return out;
}

/** An item's text inline, then what is under it (a nested list, a fence, more paragraphs) as blocks. */
function itemBody(all: readonly string[], depth: number): ComponentChildren[] {
  // The blank lines before the next item are not this one's (cut once: a slice per line was quadratic).
  let end = all.length;
  while (end > 0 && all[end - 1]!.trim() === '') end--;
  const lines = all.slice(0, end);
  if (depth + 1 >= MAX_DEPTH) return inline(lines.join('\n'));
  let first = 1;
  while (first < lines.length && lines[first]!.trim() !== '' && !ITEM.test(lines[first]!) && !FENCE.test(lines[first]!.trimEnd()) && !HEADING.test(lines[first]!) && !lines[first]!.startsWith('>')) first++;
  const rest = lines.slice(first);
  return rest.length === 0 ? inline(lines.join('\n')) : [...inline(lines.slice(0, first).join('\n')), ...blocks(rest, depth + 1)];
}

/** Leading tabs as four spaces each, so indents compare (the rest of the line is left as it is). */
function untab(line: string): string {
  if (!line.startsWith('\t')) return line;
  const tabs = /^\t+/.exec(line)![0].length;
  return ' '.repeat(tabs * 4) + line.slice(tabs);
}
