/**
 * Block tree → Markdown. Containers become mdast nodes so that mdast-util-to-markdown owns list
 * markers, indentation, `> ` prefixes and the blank lines between blocks; leaf content is already
 * Markdown, so it goes in as a raw node and is never re-escaped (refs and tags stay byte-identical).
 */
import type { BlockContent, Blockquote, Html, List, ListItem, Nodes, Paragraph, PhrasingContent, Root } from 'mdast';
import { trimMarkdownSpace } from './ascii-space.js';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import remarkStringify, { type Options as StringifyOptions } from 'remark-stringify';
import { unified } from 'unified';
import type { Block, DraftBlock } from './block-model.js';
import { ALERT } from './markdown-in.js';
import { OBSIDIAN_CALLOUT_HEADER } from './obsidian/callouts.js';

/** Fixed so that the output of a block tree never depends on the input's marker choices. */
const STRINGIFY_OPTIONS: StringifyOptions = {
  bullet: '-',
  bulletOther: '*',
  bulletOrdered: '.',
  closeAtx: false,
  emphasis: '_',
  fence: '`',
  fences: true,
  incrementListMarker: true,
  listItemIndent: 'one',
  quote: '"',
  resourceLink: false,
  rule: '-',
  ruleRepetition: 3,
  ruleSpaces: false,
  setext: false,
  strong: '*',
  tightDefinitions: false,
};

/**
 * In a tight list item, a paragraph followed by a quote or list whose first line is an empty list item
 * (`> 1.`, `- 1.`) gets a blank line before it: an empty item cannot interrupt a paragraph, so it was
 * read back as the paragraph's text ("1.", "-"). remark already does so for a list that is itself one.
 */
function startsWithEmptyItem(node: Nodes): boolean {
  if (node.type === 'blockquote') return node.children[0] !== undefined && startsWithEmptyItem(node.children[0]);
  if (node.type !== 'list') return false;
  const first = node.children[0]?.children[0];
  return first === undefined || startsWithEmptyItem(first);
}
type Join = NonNullable<StringifyOptions['join']>[number];
const emptyItemAfterParagraph: Join = (left, right, parent) =>
  parent.type === 'listItem' && left.type === 'paragraph' && (right.type === 'blockquote' || right.type === 'list') && startsWithEmptyItem(right) ? 1 : undefined;

const stringifier = unified().use(remarkStringify, { ...STRINGIFY_OPTIONS, join: [emptyItemAfterParagraph] }).use(remarkGfm).use(remarkMath).freeze();

type AnyBlock = Block | DraftBlock;
type FlowNode = BlockContent;

/** A document's children as Markdown, ending in one newline; no blocks give ''. */
/** Obsidian's callout header (`[!info]- Title`) from a callout's attributes, instead of GitHub's `[!NOTE]`. */
let obsidianCallouts = false;

export function blocksToMarkdown(blocks: readonly Block[] | readonly DraftBlock[], options: { obsidian?: boolean } = {}): string {
  // Synchronous throughout: the flag cannot leak into another call.
  obsidianCallouts = options.obsidian === true;
  try {
    const root: Root = { type: 'root', children: toFlow(blocks) };
    return root.children.length === 0 ? '' : stringifier.stringify(root);
  } finally {
    obsidianCallouts = false;
  }
}

function toFlow(blocks: readonly AnyBlock[]): FlowNode[] {
  const out: FlowNode[] = [];
  for (const block of blocks) {
    // A document inside a document has no Markdown form of its own; its blocks are kept.
    if (block.type === 'document') out.push(...toFlow(block.children ?? []));
    // Blank text has no Markdown form; written out it would only shift the blank lines around it.
    else if (!SOURCE_TYPES.has(block.type) || trimMarkdownSpace(block.content ?? '') !== '') out.push(toNode(block));
  }
  return out;
}

const SOURCE_TYPES = new Set(['paragraph', 'table', 'html', 'embed']);

function toNode(block: AnyBlock): FlowNode {
  const content = block.content ?? '';
  switch (block.type) {
    case 'heading': return heading(block.subtype, content);
    case 'list': return list(block);
    case 'listItem': return { type: 'list', ordered: false, spread: false, children: [listItem(block)] };
    case 'code': return code(block.subtype, content);
    case 'math': return { type: 'math', meta: null, value: content };
    case 'blockquote': return blockquote(block);
    case 'callout': return callout(block);
    case 'thematicBreak': return { type: 'thematicBreak' };
    // Tables and HTML are stored as their source; html nodes are written out verbatim.
    case 'table':
    case 'html': return raw(content.trim());
    case 'embed': return paragraph(`{{ ${content.trim()} }}`);
    default: return paragraph(content);
  }
}

/** The info string (the subtype) as the fence's language and what follows it. */
function code(info: string | undefined, value: string): FlowNode {
  const text = trimMarkdownSpace(info ?? '');
  const space = text.search(/[ \t]/);
  if (space === -1) return { type: 'code', lang: text || null, meta: null, value };
  return { type: 'code', lang: text.slice(0, space), meta: trimMarkdownSpace(text.slice(space)), value };
}

/**
 * A quote whose first paragraph starts with what reads as a callout's marker (GitHub's `[!NOTE]` on a
 * line of its own; for Obsidian any `[!type]`) is escaped there, or it would come back as a callout.
 */
function blockquote(block: AnyBlock): Blockquote {
  const children = toFlow(block.children ?? []);
  const first = children[0];
  const text = first?.type === 'paragraph' && first.children[0]?.type === 'html' ? first.children[0].value : '';
  if ((obsidianCallouts ? OBSIDIAN_CALLOUT_HEADER : ALERT).test(text)) children[0] = { type: 'paragraph', children: [raw(`\\${text}`) as PhrasingContent] };
  return { type: 'blockquote', children };
}

function raw(value: string): Html {
  return { type: 'html', value };
}

function paragraph(content: string): Paragraph {
  const text = protectParagraph(content);
  return { type: 'paragraph', children: text === '' ? [] : [raw(text) as PhrasingContent] };
}

function heading(subtype: string | undefined, content: string): FlowNode {
  const level = /^h[1-6]$/.test(subtype ?? '') ? Number(subtype!.slice(1)) as 1 | 2 | 3 | 4 | 5 | 6 : 1;
  let text = trimMarkdownSpace(content);
  // Only levels 1 and 2 have a multi-line (setext) form, which to-markdown picks on its own.
  if (level > 2 && text.includes('\n')) text = text.replace(/[ \t]*\r?\n[ \t]*/g, ' ');
  // A trailing run of `#` after a space would be read back as an ATX closing sequence.
  if (/(?:^|[ \t])#+$/.test(text)) text = text.replace(/#+$/, (hashes) => `\\${hashes}`);
  return { type: 'heading', depth: level, children: text === '' ? [] : [raw(text) as PhrasingContent] };
}

function list(block: AnyBlock): List {
  const ordered = block.subtype === 'ordered';
  const node: List = { type: 'list', ordered, spread: false, children: [] };
  if (ordered) node.start = block.start ?? 1;
  for (const child of block.children ?? []) {
    node.children.push(child.type === 'listItem' ? listItem(child) : { type: 'listItem', spread: false, children: [toNode(child)] });
  }
  return node;
}

function listItem(block: AnyBlock): ListItem {
  const checked = block.subtype === 'task' ? block.checked === true : null;
  const children = toFlow(block.children ?? []);
  // A plain item whose text starts `[ ]` or `[x]` would read back as a task, its text a checkbox.
  const first = children[0];
  if (checked === null && first?.type === 'paragraph' && first.children[0]?.type === 'html' && /^\[[ xX]\](?:[ \t\n]|$)/.test(first.children[0].value)) {
    first.children[0] = raw(`\\${first.children[0].value}`) as PhrasingContent;
  }
  return { type: 'listItem', spread: false, checked, children };
}

const CALLOUT_TYPES = new Set(['note', 'tip', 'important', 'warning', 'caution']);

function callout(block: AnyBlock): Blockquote {
  const kind = CALLOUT_TYPES.has(block.subtype ?? '') ? block.subtype! : 'note';
  // An Obsidian callout's own type, folding and title, kept as attributes when it was read.
  const attrs = obsidianCallouts ? block.attrs ?? {} : {};
  const type = /^[a-z][\w-]{0,40}$/.test(attrs['custom-callout'] ?? '') ? attrs['custom-callout']! : kind;
  const fold = attrs['custom-callout-fold'] === '+' || attrs['custom-callout-fold'] === '-' ? attrs['custom-callout-fold'] : '';
  const title = (attrs['custom-callout-title'] ?? '').replace(/\s+/g, ' ').trim();
  const marker = `[!${type.toUpperCase()}]${fold}${title ? ` ${title}` : ''}`;
  const children = toFlow(block.children ?? []);
  const first = block.children?.[0];
  // GitHub writes the marker on the first line of the quote's first paragraph, text on the next line.
  if (first?.type === 'paragraph' && trimMarkdownSpace(first.content ?? '') !== '') {
    children[0] = { type: 'paragraph', children: [raw(`${marker}\n${protectParagraph(first.content ?? '', true)}`) as PhrasingContent] };
  } else {
    children.unshift({ type: 'paragraph', children: [raw(marker) as PhrasingContent] });
  }
  return { type: 'blockquote', children };
}

// Lines that would open another block if a paragraph started with them (tested on one line)… A fence of
// backticks is one only when no backtick follows on its line, and `$$` only when no `$` does: `$$E=mc^2$$`
// is a paragraph's inline math, and escaping it (`\$$E=mc^2$$`) changed what it meant.
const BLOCK_START = /^(?:#{1,6}(?:[ \t]|$)|>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|`{3,}[^`]*$|~{3}|\${2,}[^$]*$|(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$)/;
// …and the subset that interrupts a paragraph, plus setext underlines and a table's delimiter row (the
// lines before it would become the table's head: a paragraph lazily continued under a list item, `Name |
// Age` then `---|---`, came back a table once written with the item's indent), on its later lines.
const INTERRUPT = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|[-+*][ \t]+[^ \t\r\n]|1[.)][ \t]+[^ \t\r\n]|`{3,}[^`]*$|~{3}|\${2,}[^$]*$|=+[ \t]*$|-+[ \t]*$|(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$|\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$)/;

// The HTML blocks that may interrupt a paragraph (CommonMark's kinds 1 to 6), on any of its lines: a
// paragraph's later line `<div>y</div>` (its indent stripped) came back as a block of HTML.
const HTML_START = /^ {0,3}(?:<(?:script|pre|style|textarea)(?:[ \t>]|$)|<!--|<\?|<![A-Za-z]|<!\[CDATA\[|<\/?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:[ \t>]|\/>|$))/i;

/**
 * Content parsed from Markdown never matches these patterns (it would have become another block);
 * content written by a person or the agent might, and is escaped so that it reads back as one paragraph.
 */
export function protectParagraph(content: string, continuation = false): string {
  let text = trimMarkdownSpace(content);
  // The first line alone: `2)` then `more` on the next line read back as an empty list item.
  const newline = text.indexOf('\n');
  const first = newline === -1 ? text : text.slice(0, newline);
  if (!continuation && (BLOCK_START.test(first) || HTML_START.test(first))) text = escapeLineStart(text);
  // A later line is escaped, or (HTML, where a backslash would show its tag as text) indented by four
  // spaces: a paragraph's continuation, whose indent the parse strips, and no block of HTML.
  const protect = (line: string): string => (HTML_START.test(line) ? `    ${line}` : INTERRUPT.test(line) ? escapeLineStart(line) : line);
  if (!text.includes('\n')) return continuation ? protect(text) : text;
  const lines = text.split('\n');
  for (let i = continuation ? 0 : 1; i < lines.length; i++) lines[i] = protect(lines[i]!);
  return lines.join('\n');
}

function escapeLineStart(line: string): string {
  const indent = /^[ \t]*/.exec(line)![0].length;
  const ordered = /^\d{1,9}(?=[.)])/.exec(line.slice(indent));
  // `1.` is escaped at its delimiter: a backslash before a digit escapes nothing.
  const at = ordered ? indent + ordered[0].length : indent;
  return `${line.slice(0, at)}\\${line.slice(at)}`;
}
