/**
 * Markdown → block tree. remark (with GFM and math) finds the block structure; each leaf's content
 * is then cut out of the source by offsets rather than re-serialised, which is both faster and exact:
 * a re-serialised paragraph would come back with escapes added to refs and tags.
 */
import type { Blockquote, FootnoteDefinition, Heading, List, ListItem, Nodes, Root, RootContent } from 'mdast';
import { trimMarkdownSpace, trimMarkdownSpaceEnd } from './ascii-space.js';
import { toString } from 'mdast-util-to-string';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import remarkParse from 'remark-parse';
import { unified, type Data, type Processor } from 'unified';
import type { DraftBlock } from './block-model.js';
import { plainBlocks, type PlainBlock } from './markdown-plain.js';

/**
 * Inline constructs, switched off in micromark: leaf content is sliced from the source, so parsing
 * inside paragraphs is wasted work (a third of the time), and in CommonMark and GFM inline syntax
 * never changes block structure. Kept: task checkboxes (`tasklistCheck`), line endings, and escapes
 * and entities, which a fence's language may contain.
 */
const INLINE_CONSTRUCTS = [
  'attention', 'autolink', 'codeText', 'hardBreakEscape', 'htmlText', 'labelEnd', 'labelStartImage',
  'labelStartLink', 'strikethrough', 'mathText', 'gfmFootnoteCall', 'gfmPotentialFootnoteCall',
  'emailAutolink', 'protocolAutolink', 'wwwAutolink',
];

/** GFM tables start at any line, and their test reads the whole line each time: skipped where no `|` is. */
const TABLE_CONSTRUCTS = ['table'];

/**
 * Leaves remark with the block structure only. The inline constructs are taken out of the GFM and
 * math extensions altogether rather than only disabled: a disabled construct is still tried at each
 * character it is registered for (GFM's email autolink at every letter and digit), which cost about
 * a tenth of the parse. CommonMark's own constructs can only be disabled.
 */
function blockStructureOnly(this: Processor, options?: { tables?: boolean }): undefined {
  const data = this.data();
  const removed = new Set(options?.tables === false ? [...INLINE_CONSTRUCTS, ...TABLE_CONSTRUCTS] : INLINE_CONSTRUCTS);
  data.micromarkExtensions = (data.micromarkExtensions ?? []).map((extension) => withoutConstructs(extension, removed));
  data.micromarkExtensions.push({ disable: { null: INLINE_CONSTRUCTS } });
  // GFM's bare-URL search walks every text node after the parse, again for inline syntax only.
  data.fromMarkdownExtensions = data.fromMarkdownExtensions?.map(withoutTransforms);
}

/** The same extension as `blockStructureOnly` sets up before this change: only disabling (the reference). */
function blockStructureDisabled(this: Processor): undefined {
  const data = this.data();
  (data.micromarkExtensions ??= []).push({ disable: { null: INLINE_CONSTRUCTS } });
  data.fromMarkdownExtensions = data.fromMarkdownExtensions?.map(withoutTransforms);
}

type MicromarkExtension = NonNullable<Data['micromarkExtensions']>[number];
type ConstructMap = Record<string, unknown>;

/** A copy of a micromark extension without the constructs of the given names. */
function withoutConstructs(extension: MicromarkExtension, names: ReadonlySet<string>): MicromarkExtension {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(extension)) {
    if (field === 'disable' || field === 'attentionMarkers' || field === 'insideSpan' || value === undefined || value === null) {
      copy[field] = value;
      continue;
    }
    const map: ConstructMap = {};
    for (const [code, constructs] of Object.entries(value as ConstructMap)) {
      const list = (Array.isArray(constructs) ? constructs : [constructs]) as { name?: string }[];
      const kept = list.filter((construct) => construct.name === undefined || !names.has(construct.name));
      if (kept.length > 0) map[code] = kept;
    }
    copy[field] = map;
  }
  return copy as MicromarkExtension;
}

type MdastExtensions = NonNullable<Data['fromMarkdownExtensions']>[number];

function withoutTransforms(extension: MdastExtensions): MdastExtensions {
  if (Array.isArray(extension)) return extension.map((inner) => withoutTransforms(inner) as typeof inner);
  if (!extension.transforms) return extension;
  const { transforms: _unused, ...rest } = extension;
  return rest;
}

const withTables = unified().use(remarkParse).use(remarkGfm).use(remarkMath).use(blockStructureOnly).freeze();
const withoutTables = unified().use(remarkParse).use(remarkGfm).use(remarkMath).use(blockStructureOnly, { tables: false }).freeze();
const reference = unified().use(remarkParse).use(remarkGfm).use(remarkMath).use(blockStructureDisabled).freeze();

/** A GFM table needs a `|` on its delimiter row: text without one is parsed without the table construct. */
function parserFor(src: string): typeof withTables {
  return src.includes('|') ? withTables : withoutTables;
}

interface Context {
  readonly src: string;
  readonly newId: () => string;
  /** Blockquotes around the current node: each puts a `>` in front of every line it spans. */
  readonly quotes: number;
}

/**
 * The top-level blocks of a Markdown text (a document's children), ids from `newId` in document order.
 * The text is taken in chunks, each starting where a top-level block must start (chunkStarts): a
 * chunk of plain paragraphs and headings is converted directly (markdown-plain.ts); runs of other
 * chunks go to remark, in pieces of about PIECE_CHARS.
 */
export function markdownToBlocks(text: string, newId: () => string): DraftBlock[] {
  const markdown = withoutByteOrderMark(text);
  const blocks: DraftBlock[] = [];
  const starts = chunkStarts(markdown);
  /** Where the text not yet converted, and left to remark, starts; -1 when there is none. */
  let pending = -1;
  const parsePending = (end: number, last: boolean): boolean => {
    const piece = markdown.slice(pending, end);
    // micromark drops a U+FEFF opening what it parses, and shifts its offsets by it, so every block's
    // text was cut one character off: a piece opening with one (mid-text, where it is an invisible
    // character of the text) is parsed after a blank line, which changes no structure.
    const src = piece.charCodeAt(0) === 0xfeff ? `\n${piece}` : piece;
    const tree: Root = parserFor(src).parse(src);
    // A cut inside a fenced block leaves it unclosed: the piece goes on into the next chunk.
    if (!last && endsOpen(tree, src)) return false;
    for (const node of tree.children) blocks.push(convert(node, { src, newId, quotes: 0 }));
    pending = -1;
    return true;
  };
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k]!;
    const end = k + 1 < starts.length ? starts[k + 1]! : markdown.length;
    const plain = plainBlocks(markdown, start, end);
    if (plain && (pending === -1 || parsePending(start, false))) {
      for (const block of plain) blocks.push(fromPlain(block, markdown, newId));
      continue;
    }
    if (pending === -1) pending = start;
    if (end - pending >= PIECE_CHARS && k + 1 < starts.length) parsePending(end, false);
  }
  if (pending !== -1) parsePending(markdown.length, true);
  return blocks;
}

/**
 * The blocks every byte of the text through remark gives (GFM in full, one piece): what the fast
 * paths above must reproduce exactly, kept for the tests that check they do.
 */
/** A byte order mark opening the text is no part of it (a file saved with one, pasted whole; micromark drops it with its offset). */
function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function markdownToBlocksByFullParser(text: string, newId: () => string): DraftBlock[] {
  const markdown = withoutByteOrderMark(text);
  const tree: Root = reference.parse(markdown);
  return tree.children.map((node) => convert(node, { src: markdown, newId, quotes: 0 }));
}

function fromPlain(block: PlainBlock, src: string, newId: () => string): DraftBlock {
  const ctx: Context = { src, newId, quotes: 0 };
  if (block.kind === 'heading') return leaf(ctx, 'heading', slice(ctx, block.start, block.end), `h${block.depth}`);
  return paragraph(slice(ctx, block.start, block.end), ctx);
}

/**
 * micromark takes time quadratic in the length of a document that has many lists or quotes (every
 * closed container copies the document's event list), so long sources are parsed in pieces of about
 * PIECE_CHARS (throughput is flat from 256 to 2048 and falls beyond). A chunk (and so a piece) may
 * start only where a top-level block must start: after a blank line, at a line that is not indented
 * (so it continues no list item, quote or footnote) and is not a list marker (which could continue the
 * list before it), outside fenced code, math and raw HTML. Link references do not need their
 * definitions in the same piece: content is sliced from the source, whatever the reference resolved to.
 */
const PIECE_CHARS = 2048;
const LIST_MARKER = /^(?:[-+*]|\d{1,9}[.)])(?:[ \t\r]|$)/;
const BLANK = /^[ \t\r]*$/;

/** Offsets where a chunk may start, the first always 0. */
function chunkStarts(src: string): number[] {
  const starts = [0];
  let blank = false;
  let closes: ((line: string) => boolean) | undefined;
  for (let at = 0; at < src.length;) {
    let end = src.indexOf('\n', at);
    if (end === -1) end = src.length;
    const line = src.slice(at, end);
    if (closes) {
      if (closes(line)) closes = undefined;
    } else if (!BLANK.test(line)) {
      const first = line.charCodeAt(0);
      if (blank && at > 0 && first !== 32 && first !== 9 && !LIST_MARKER.test(line)) starts.push(at);
      closes = opener(line);
    }
    blank = closes === undefined && BLANK.test(line);
    at = end + 1;
  }
  return starts;
}

const OPENER = /^ {0,3}(?:(`{3,}|~{3,}|\${2,})([^]*)|<(!--|\?|!\[CDATA\[|![A-Za-z]|(?:script|pre|style|textarea)(?=[\s>]|$)))/i;
const HTML_END = new Map([['!--', '-->'], ['?', '?>'], ['![cdata[', ']]>']]);

/** For a line opening a fenced block: the test for the line that closes it. */
export function opener(line: string): ((line: string) => boolean) | undefined {
  const match = OPENER.exec(line);
  if (!match) return undefined;
  const [, fence, info, tag] = match;
  if (fence) {
    // The info string after a backtick or dollar fence may not hold that character; after tildes it may.
    if (fence[0] !== '~' && info!.includes(fence[0]!)) return undefined;
    return (next) => {
      const trimmed = next.trim();
      return trimmed.length >= fence.length && trimmed.split(fence[0]!).join('') === '';
    };
  }
  const name = tag!.toLowerCase();
  const endMark = HTML_END.get(name) ?? (name.startsWith('!') ? '>' : `</${name}>`);
  const closes = (next: string): boolean => next.toLowerCase().includes(endMark);
  return closes(line.slice(match[0].length)) ? undefined : closes;
}

/** Whether the last block of a piece is a fenced block that its piece cut off before its end. */
function endsOpen(tree: Root, src: string): boolean {
  const last = tree.children[tree.children.length - 1];
  if (!last || (last.type !== 'code' && last.type !== 'math' && last.type !== 'html')) return false;
  const text = src.slice(last.position?.start.offset ?? 0, last.position?.end.offset ?? src.length);
  const newline = text.indexOf('\n');
  const closes = opener(newline === -1 ? text : text.slice(0, newline));
  return closes !== undefined && (newline === -1 || !closes(text.slice(text.lastIndexOf('\n') + 1)));
}

function convertAll(nodes: readonly RootContent[], ctx: Context): DraftBlock[] {
  const blocks: DraftBlock[] = [];
  for (const node of nodes) blocks.push(convert(node, ctx));
  return blocks;
}

function convert(node: RootContent, ctx: Context): DraftBlock {
  switch (node.type) {
    case 'paragraph': return paragraph(source(node, ctx), ctx);
    case 'heading': return heading(node, ctx);
    case 'list': return list(node, ctx);
    // The whole info string (`js title="a.js"`), the language first: what follows it is kept too.
    case 'code': return leaf(ctx, 'code', lf(node.value), node.lang ? (node.meta ? `${node.lang} ${trimMarkdownSpace(node.meta)}` : node.lang) : undefined);
    case 'math': return leaf(ctx, 'math', lf(node.value));
    case 'table': return leaf(ctx, 'table', source(node, ctx));
    case 'blockquote': return blockquote(node, ctx);
    case 'thematicBreak': return { id: ctx.newId(), type: 'thematicBreak' };
    case 'html': return leaf(ctx, 'html', lf(node.value));
    case 'footnoteDefinition': return leaf(ctx, 'paragraph', footnoteSource(node, ctx));
    // Definitions and anything else at flow level have no block type: kept as a paragraph of their
    // source, which reads back as the same construct.
    default: return leaf(ctx, 'paragraph', source(node, ctx));
  }
}

function leaf(ctx: Context, type: DraftBlock['type'], content: string, subtype?: string): DraftBlock {
  const block: DraftBlock = { id: ctx.newId(), type };
  if (subtype) block.subtype = subtype;
  block.content = content;
  return block;
}

/**
 * The whole paragraph one `{{target}}`, with no other `{{` in it: "{{name}} said {{message}}" is text,
 * while a query may hold `}}` (`content = '}}'`), as an embed written out does.
 */
function embedTarget(content: string): string | undefined {
  if (!content.startsWith('{{') || !content.endsWith('}}') || content.length < 4 || content.indexOf('{{', 2) !== -1) return undefined;
  return content.slice(2, -2).trim() || undefined;
}

function paragraph(content: string, ctx: Context): DraftBlock {
  const target = content.charCodeAt(0) === 123 /* { */ ? embedTarget(content) : undefined;
  return target === undefined ? leaf(ctx, 'paragraph', content) : leaf(ctx, 'embed', target);
}

function heading(node: Heading, ctx: Context): DraftBlock {
  const first = node.children[0];
  const last = node.children[node.children.length - 1];
  // The children's span leaves out the `#` run, an ATX closing sequence and a setext underline.
  const content = first?.position && last?.position ? slice(ctx, first.position.start.offset!, last.position.end.offset!) : '';
  return leaf(ctx, 'heading', content, `h${node.depth}`);
}

function list(node: List, ctx: Context): DraftBlock {
  const isTask = node.children.length > 0 && node.children.every((item) => typeof item.checked === 'boolean');
  // An ordered list of tasks stays ordered (its items are tasks all the same): `1. [ ]` came back as `- [ ]`.
  const block: DraftBlock = { id: ctx.newId(), type: 'list', subtype: node.ordered ? 'ordered' : isTask ? 'task' : 'unordered' };
  if (node.ordered && typeof node.start === 'number' && node.start !== 1) block.start = node.start;
  block.children = node.children.map((item) => listItem(item, ctx));
  return block;
}

function listItem(node: ListItem, ctx: Context): DraftBlock {
  const block: DraftBlock = { id: ctx.newId(), type: 'listItem' };
  if (typeof node.checked === 'boolean') {
    block.subtype = 'task';
    block.checked = node.checked;
  }
  block.children = convertAll(typeof node.checked === 'boolean' ? afterCheckbox(node).children : node.children, ctx);
  return block;
}

/**
 * A task item's children with its first paragraph's span starting at its first child left (past line
 * breaks): mdast drops a checkbox's text node that holds nothing else (`- [x]␣␣⏎Buy milk`) without
 * moving the paragraph's start, and the item's text came back as `[x]  ⏎Buy milk`, its checkbox twice.
 */
function afterCheckbox(node: ListItem): ListItem {
  const first = node.children[0];
  if (first?.type !== 'paragraph' || !first.position) return node;
  const start = first.children.find((child) => child.type !== 'break')?.position?.start ?? first.position.end;
  if (start.offset === undefined || start.offset <= first.position.start.offset!) return node;
  return { ...node, children: [{ ...first, position: { ...first.position, start } }, ...node.children.slice(1)] };
}

/** A GitHub alert's marker line, which makes a quote a callout. */
export const ALERT = /^\[!(note|tip|important|warning|caution)\][ \t]*(?:\n|$)/i;

function blockquote(node: Blockquote, ctx: Context): DraftBlock {
  const id = ctx.newId();
  const inner = { ...ctx, quotes: ctx.quotes + 1 };
  const first = node.children[0];
  if (first?.type !== 'paragraph') return { id, type: 'blockquote', children: convertAll(node.children, inner) };
  const head = source(first, inner);
  const alert = ALERT.exec(head);
  // GFM alert: the marker line is the callout's type, whatever follows it stays the first paragraph.
  const rest = alert ? head.slice(alert[0].length) : head;
  const children = rest === '' ? [] : [paragraph(rest, inner)];
  children.push(...convertAll(node.children.slice(1), inner));
  return alert ? { id, type: 'callout', subtype: alert[1]!.toLowerCase(), children } : { id, type: 'blockquote', children };
}

function footnoteSource(node: FootnoteDefinition, ctx: Context): string {
  const position = node.position;
  if (!position) return toString(node);
  const text = lf(ctx.src.slice(position.start.offset!, position.end.offset!).trimEnd());
  // Its later lines are indented to belong to it, which must stay; what lies left of its first
  // column on them is the containers' prefix.
  const width = position.start.column - 1;
  if (width === 0 || !text.includes('\n')) return text;
  return text.split('\n').map((line, i) => (i === 0 ? line : stripColumns(line, width))).join('\n');
}

function stripColumns(line: string, width: number): string {
  let at = 0;
  for (let c = line.charCodeAt(0); at < width && (c === 32 || c === 9 || c === 62); c = line.charCodeAt(++at));
  return line.slice(at);
}

function source(node: Nodes, ctx: Context): string {
  const position = node.position;
  // remark-parse always sets positions; a tree from elsewhere might not.
  if (!position) return toString(node);
  return slice(ctx, position.start.offset!, position.end.offset!);
}

/** Code, math and HTML values keep the source's line endings; content always uses `\n`. */
function lf(text: string): string {
  return text.indexOf('\r') === -1 ? text : text.replace(/\r\n?/g, '\n');
}

/**
 * The source between two offsets with container prefixes removed. Only later lines carry prefixes;
 * what a container leaves on a line is `>` markers and whitespace, and leading whitespace on the
 * continuation lines of a paragraph, heading or table row has no meaning, so it goes too.
 */
function slice(ctx: Context, start: number, end: number): string {
  const text = trimMarkdownSpaceEnd(ctx.src.slice(start, end));
  if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) return text;
  const lines = text.split(/\r\n?|\n/);
  for (let i = 1; i < lines.length; i++) lines[i] = stripPrefix(lines[i]!, ctx.quotes);
  return lines.join('\n');
}

function stripPrefix(line: string, quotes: number): string {
  let at = 0;
  for (let q = 0; q < quotes; q++) {
    let i = at;
    while (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9) i++;
    // A lazy continuation line has fewer markers than the quotes around it.
    if (line.charCodeAt(i) !== 62 /* > */) break;
    at = i + 1;
  }
  while (line.charCodeAt(at) === 32 || line.charCodeAt(at) === 9) at++;
  return at === 0 ? line : line.slice(at);
}
