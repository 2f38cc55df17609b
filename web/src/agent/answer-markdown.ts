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
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;

/**
 * An agent's answer as the Markdown it is written in: paragraphs, headings, lists, code fences and
 * quotes, with the notes' inline renderer inside (text nodes only, so nothing in an answer runs, and
 * links keep the same safe targets). It was shown as raw Markdown. Linear: one pass over the lines.
 */
export function renderAnswer(markdown: string): ComponentChildren[] {
  const lines = markdown.split(/\r?\n/);
  const out: ComponentChildren[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  let quote: string[] = [];
  const inline = (text: string): ComponentChildren[] => renderInline(text, CONTEXT);
  const flush = (): void => {
    if (paragraph.length > 0) out.push(h('p', null, inline(paragraph.join('\n'))));
    if (list) out.push(h(list.ordered ? 'ol' : 'ul', null, list.items.map((item) => h('li', null, inline(item)))));
    if (quote.length > 0) out.push(h('blockquote', null, h('p', null, inline(quote.join('\n')))));
    paragraph = [];
    list = undefined;
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
    const bullet = BULLET.exec(line) ?? NUMBERED.exec(line);
    if (bullet) {
      const ordered = !BULLET.test(line);
      if (paragraph.length > 0 || quote.length > 0 || (list && list.ordered !== ordered)) flush();
      list ??= { ordered, items: [] };
      list.items.push(bullet[1]!);
      continue;
    }
    if (line.startsWith('>')) {
      if (paragraph.length > 0 || list) flush();
      quote.push(line.replace(/^>\s?/, ''));
      continue;
    }
    // A line under a list item that is not a new item continues it.
    if (list && /^\s+\S/.test(line)) { list.items[list.items.length - 1] += `\n${line.trim()}`; continue; }
    if (list || quote.length > 0) flush();
    paragraph.push(line);
  }
  flush();
  return out;
}
