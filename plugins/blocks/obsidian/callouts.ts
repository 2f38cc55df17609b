import type { DraftBlock } from '../block-model.js';

/**
 * Obsidian's callouts in a parsed note: a quote whose first line is `[!type]`, with an optional fold
 * mark (`+`, `-`) and title, is a callout. GitHub reads only its five kinds and no title; Obsidian any
 * type, so an Obsidian note's quotes are read again here. The type maps to the nearest of Quire's kinds;
 * the type, fold and title are kept as attributes (custom-callout, -fold, -title) and written back.
 */
export const OBSIDIAN_CALLOUT_HEADER = /^\[!([A-Za-z][\w-]{0,40})\]([+-]?)[ \t]*([^\n]*)(?:\n|$)/;
const KINDS = new Set(['note', 'tip', 'important', 'warning', 'caution']);
const NEAREST: Readonly<Record<string, string>> = {
  info: 'note', todo: 'note', abstract: 'note', summary: 'note', tldr: 'note', example: 'note', quote: 'note', cite: 'note',
  success: 'tip', check: 'tip', done: 'tip', hint: 'tip',
  question: 'important', help: 'important', faq: 'important',
  attention: 'warning',
  failure: 'caution', fail: 'caution', missing: 'caution', danger: 'caution', error: 'caution', bug: 'caution',
};

export function obsidianCallouts(drafts: DraftBlock[]): DraftBlock[] {
  return drafts.map((draft) => {
    if (draft.children) draft.children = obsidianCallouts(draft.children);
    const first = draft.children?.[0];
    if ((draft.type !== 'blockquote' && draft.type !== 'callout') || first?.type !== 'paragraph') return draft;
    const header = OBSIDIAN_CALLOUT_HEADER.exec(first.content ?? '');
    if (!header) return draft;
    const type = header[1]!.toLowerCase();
    const subtype = KINDS.has(type) ? type : NEAREST[type] ?? 'note';
    const attrs: Record<string, string> = { ...draft.attrs };
    if (type !== subtype) attrs['custom-callout'] = type;
    if (header[2]) attrs['custom-callout-fold'] = header[2];
    if (header[3]!.trim() !== '') attrs['custom-callout-title'] = header[3]!.trim();
    const rest = (first.content ?? '').slice(header[0].length);
    const children = rest === '' ? draft.children!.slice(1) : [{ ...first, content: rest }, ...draft.children!.slice(1)];
    return { ...draft, type: 'callout', subtype, attrs, children };
  });
}
