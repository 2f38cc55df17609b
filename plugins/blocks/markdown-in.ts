/**
 * Markdown → block tree. remark (with GFM and math) finds the block structure; each leaf's content
 * is then cut out of the source by offsets rather than re-serialised, which is both faster and exact:
 * a re-serialised paragraph would come back with escapes added to refs and tags.
 */
import type { Blockquote, FootnoteDefinition, Heading, List, ListItem, Nodes, Root, RootContent } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkMath from 'remark-math';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import type { DraftBlock } from './block-model.js';
import { mdastToMarkdown } from './markdown-out.js';

const parser = unified().use(remarkParse).use(remarkGfm).use(remarkMath).freeze();

interface Context {
  readonly src: string;
  readonly newId: () => string;
  /** Blockquotes around the current node: each puts a `>` in front of every line it spans. */
  readonly quotes: number;
  /** Inside any container, so later lines of a node carry prefixes that are not its own. */
  readonly nested: boolean;
}

export function markdownToBlocks(markdown: string, newId: () => string): DraftBlock[] {
  const tree: Root = parser.parse(markdown);
  return convertAll(tree.children, { src: markdown, newId, quotes: 0, nested: false });
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
    case 'code': return leaf(ctx, 'code', node.value, node.lang ?? undefined);
    case 'math': return leaf(ctx, 'math', node.value);
    case 'table': return leaf(ctx, 'table', source(node, ctx));
    case 'blockquote': return blockquote(node, ctx);
    case 'thematicBreak': return { id: ctx.newId(), type: 'thematicBreak' };
    case 'html': return leaf(ctx, 'html', node.value);
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

const EMBED = /^\{\{([\s\S]*)\}\}$/;

function paragraph(content: string, ctx: Context): DraftBlock {
  if (content.charCodeAt(0) === 123 /* { */) {
    const target = EMBED.exec(content)?.[1]?.trim();
    if (target) return leaf(ctx, 'embed', target);
  }
  return leaf(ctx, 'paragraph', content);
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
  const block: DraftBlock = { id: ctx.newId(), type: 'list', subtype: isTask ? 'task' : node.ordered ? 'ordered' : 'unordered' };
  if (node.ordered && !isTask && typeof node.start === 'number' && node.start !== 1) block.start = node.start;
  const inner = { ...ctx, nested: true };
  block.children = node.children.map((item) => listItem(item, inner));
  return block;
}

function listItem(node: ListItem, ctx: Context): DraftBlock {
  const block: DraftBlock = { id: ctx.newId(), type: 'listItem' };
  if (typeof node.checked === 'boolean') {
    block.subtype = 'task';
    block.checked = node.checked;
  }
  block.children = convertAll(node.children, ctx);
  return block;
}

const ALERT = /^\[!(note|tip|important|warning|caution)\][ \t]*(?:\n|$)/i;

function blockquote(node: Blockquote, ctx: Context): DraftBlock {
  const id = ctx.newId();
  const inner = { ...ctx, quotes: ctx.quotes + 1, nested: true };
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
  const { start, end } = node.position ?? {};
  // Later lines are indented to belong to the footnote: that indentation is kept at top level, and
  // inside a container, where it mixes with the container's own, the node is serialised instead.
  if (!ctx.nested && start?.offset !== undefined && end?.offset !== undefined) {
    return ctx.src.slice(start.offset, end.offset).trimEnd().replace(/\r\n?/g, '\n');
  }
  const text = source(node, ctx);
  return text.includes('\n') ? mdastToMarkdown({ type: 'root', children: [node] }).trimEnd() : text;
}

function source(node: Nodes, ctx: Context): string {
  const position = node.position;
  if (!position) return mdastToMarkdown({ type: 'root', children: [node as RootContent] }).trimEnd();
  return slice(ctx, position.start.offset!, position.end.offset!);
}

/**
 * The source between two offsets with container prefixes removed. Only later lines carry prefixes;
 * what a container leaves on a line is `>` markers and whitespace, and leading whitespace on the
 * continuation lines of a paragraph, heading or table row has no meaning, so it goes too.
 */
function slice(ctx: Context, start: number, end: number): string {
  const text = ctx.src.slice(start, end).trimEnd();
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
