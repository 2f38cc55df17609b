import type { Block, DraftBlock } from '../block-model.js';
import { mapOutsideCode } from './outside-code.js';

/**
 * Obsidian's block identifiers: `text ^abc-1` at the end of a paragraph or a list item, or `^abc-1` on
 * a line of its own after a table, a quote or a list, which `[[Note#^abc-1]]` links to and
 * `![[Note#^abc-1]]` embeds. An import gives the block the id such links were given (they point at it,
 * not at its note) and keeps the identifier, out of its text, as an attribute; an export writes it back
 * (or the block's own id, for a block a link points at), so that a vault goes out and comes back with
 * its links whole.
 */
export const BLOCK_ID_ATTR = 'custom-obsidian-block-id';

const KEY = '[A-Za-z0-9-]+';
/** An identifier as Obsidian spells one (letters, digits, dashes). */
export const BLOCK_KEY = new RegExp(`^${KEY}$`);
/** A marker ending a paragraph's text (after a blank or a line end, or the whole text; a `\r` of Windows line ends may follow). */
const TRAILING = new RegExp(`(?:^|[ \\t\\n])\\^(${KEY})[ \\t\\r]*$`);
const ALONE = new RegExp(`^\\^(${KEY})[ \\t\\r]*$`);
/** Container prefixes (quotes, a list item's marker) before a line's text. */
const PREFIX = /^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]/;
/** What ends a paragraph on the next line: a blank line, or some of the blocks that may interrupt one (a fence as outside-code.ts reads one). */
const ENDS_PARAGRAPH = /^(?:[ \t]*\r?$| {0,3}(?:[-*+][ \t]|1[.)][ \t]|#{1,6}(?:[ \t]|\r?$)|>|`{3,}[^`]*$|~{3}))/;
/** Marks a line whose prose ends in a marker (a NUL: no note holds one, an import refuses them). */
const MARK = '\u0000';

/**
 * The identifiers a note's blocks carry, as assignBlockIds will place them (a link given an id for one
 * no block takes would lead nowhere): a marker at the end of a line outside code whose block ends there
 * (the note's end, a blank line, a block that interrupts a paragraph, or the next item of a list item),
 * or a line that is only a marker, after some text. Headings are left out: their links name their text.
 */
export function blockKeysOf(markdown: string): Set<string> {
  const marked = mapOutsideCode(markdown, (prose, context) => (context.lineEnd && TRAILING.test(prose) ? prose + MARK : prose));
  const keys = new Set<string>();
  const lines = marked.split('\n');
  let textBefore = false;
  for (const [i, line] of lines.entries()) {
    const before = textBefore;
    if (line.trim() !== '') textBefore = true;
    if (!line.endsWith(MARK)) continue;
    const unquoted = line.slice(0, -1).replace(/^(?:[ \t]*>)*/, '');
    const text = unquoted.replace(PREFIX, '');
    if (/^ {0,3}#{1,6}[ \t]/.test(text)) continue;
    const alone = ALONE.exec(text);
    if (alone) {
      if (before) keys.add(alone[1]!);
      continue;
    }
    const next = (lines[i + 1] ?? '').replace(/^(?:[ \t]*>)*/, '');
    if (i + 1 === lines.length || ENDS_PARAGRAPH.test(next) || (LIST_ITEM.test(unquoted) && LIST_ITEM.test(next))) keys.add(TRAILING.exec(text)![1]!);
  }
  return keys;
}

/**
 * Takes the markers out of a parsed note's paragraphs: each becomes the attribute of its block (a
 * paragraph that is only a marker goes, its identifier given to the block before it), and a block whose
 * identifier a link was given an id for (`ids`) takes that id. Returns the identifiers no block took.
 */
export function assignBlockIds(drafts: DraftBlock[], ids: ReadonlyMap<string, string>): string[] {
  const left = new Map(ids);
  const take = (draft: DraftBlock, key: string): void => {
    draft.attrs = { ...draft.attrs, [BLOCK_ID_ATTR]: key };
    const id = left.get(key);
    if (id !== undefined && draft.id === undefined) {
      draft.id = id;
      left.delete(key);
    }
  };
  const visit = (list: DraftBlock[]): void => {
    for (let i = 0; i < list.length; i++) {
      const draft = list[i]!;
      if (draft.type === 'paragraph' && draft.content !== undefined) {
        const alone = ALONE.exec(draft.content);
        if (alone && i > 0 && list[i - 1]!.attrs?.[BLOCK_ID_ATTR] === undefined) {
          list.splice(i--, 1);
          take(list[i]!, alone[1]!);
          continue;
        }
        const trailing = alone ? null : TRAILING.exec(draft.content);
        if (trailing) {
          draft.content = draft.content.slice(0, trailing.index).replace(/[ \t]+$/, '');
          take(draft, trailing[1]!);
        }
      }
      if (draft.children) visit(draft.children);
    }
  };
  visit(drafts);
  return [...left.keys()];
}

/**
 * A document's blocks with the identifiers written back (`keyOf` gives a block's, or nothing): at the
 * end of a paragraph's text, or on a paragraph of its own after any other block but a list item.
 * Copies: the blocks given are the store's.
 */
export function withBlockIds(blocks: readonly Block[], keyOf: (block: Block) => string | undefined): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    const copy: Block = { ...block, ...(block.children ? { children: withBlockIds(block.children, keyOf) } : {}) };
    const key = keyOf(block);
    out.push(copy);
    // A list item is linked through its first paragraph (ObsidianTargets), a heading by its text.
    if (key === undefined || block.type === 'heading' || block.type === 'document' || block.type === 'listItem') continue;
    if (copy.type === 'paragraph') copy.content = `${copy.content ?? ''} ^${key}`;
    else out.push({ id: `${block.id}-key`, type: 'paragraph', content: `^${key}`, attrs: {} });
  }
  return out;
}
