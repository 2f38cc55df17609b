/**
 * SiYuan's inline nodes (the children of a paragraph, heading or table cell in a `.sy` file) as Quire's
 * inline Markdown. Spec 2 files hold flat `NodeTextMark` spans (`TextMarkType` "strong em", "block-ref",
 * "a", ...); older files nest lute's nodes (`NodeStrong` around its markers and text, `NodeBlockRef`
 * around `NodeBlockRefID` and `NodeBlockRefText`); both are read. Text is escaped just enough to read
 * back as the same text: Quire's scanners (inline-scan.ts) see no ref, tag, code span or math in it.
 */

import { isValidId } from '../../core/index.js';

/** One node of a `.sy` file: lute's `ast.Node` as its JSON encoder writes it. */
export type SyNode = Record<string, unknown>;

/** What a conversion found besides blocks: problems to report, ids referenced, `assets/` files used. */
export class Findings {
  readonly problems: string[] = [];
  readonly refs = new Set<string>();
  readonly assets = new Set<string>();
  private dropped = 0;

  problem(message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(message);
    else this.dropped++;
  }

  /** The problems, the last one counting those left out. */
  allProblems(): string[] {
    return this.dropped === 0 ? [...this.problems] : [...this.problems, `…and ${this.dropped} more problems`];
  }

  asset(target: string): void {
    const path = target.split(/[?#]/)[0]!;
    if (path.startsWith('assets/') && path.length > 7) this.assets.add(path);
  }
}

const MAX_PROBLEMS = 500;
/** Old-style inline nodes nest; past this depth the rest is read as plain text, not recursed into. */
const MAX_INLINE_DEPTH = 32;

export const str = (node: SyNode, key: string): string => (typeof node[key] === 'string' ? node[key] as string : '');
export const kids = (node: SyNode): SyNode[] => (Array.isArray(node.Children) ? node.Children.filter(isNode) : []);
export const isNode = (value: unknown): value is SyNode => typeof value === 'object' && value !== null && !Array.isArray(value);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** lute's HTML escaping undone: SiYuan escapes span texts, attribute values and some code. */
export function unescapeHtml(text: string): string {
  if (text.indexOf('&') === -1) return text;
  return text.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,6}));/g, (whole, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return NAMED[name] ?? whole;
    const point = dec !== undefined ? Number(dec) : Number.parseInt(hex!, 16);
    return point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : whole;
  });
}

/** SiYuan's editor puts zero-width spaces around spans so the caret can sit there; they are not text. */
const ZWSP = /\u200b/g;

/** Types that only mark syntax (brackets, fences, IALs); their `Data` is not text. */
export function isSyntaxNode(type: string): boolean {
  return type.endsWith('Marker') || SYNTAX.has(type);
}
const SYNTAX = new Set(['NodeBang', 'NodeOpenBracket', 'NodeCloseBracket', 'NodeOpenParen', 'NodeCloseParen', 'NodeOpenBrace',
  'NodeCloseBrace', 'NodeLinkSpace', 'NodeBlockRefSpace', 'NodeFileAnnotationRefSpace', 'NodeKramdownSpanIAL', 'NodeKramdownBlockIAL',
  'NodeLess', 'NodeGreater', 'NodeHeadingC8hMarker']);
/** Nodes whose `Data` is their text (other nodes' `Data` is a tag name or a marker: "span", "td"). */
const TEXT_DATA = new Set(['NodeText', 'NodeLinkText', 'NodeCodeSpanContent', 'NodeInlineMathContent', 'NodeBlockRefText',
  'NodeBlockRefDynamicText', 'NodeEmojiUnicode', 'NodeEmojiAlias', 'NodeCodeBlockCode', 'NodeMathBlockContent', 'NodeHTMLBlock',
  'NodeInlineHTML', 'NodeBlockQueryEmbedScript', 'NodeYamlFrontMatterContent', 'NodeBackslashContent', 'NodeFileAnnotationRefText']);

/** The words of a subtree, without recursion (a hostile file may nest deeply); blocks on their own lines. */
export function textOf(node: SyNode): string {
  const parts: string[] = [];
  const stack: SyNode[] = [node];
  for (let at = stack.pop(); at; at = stack.pop()) {
    const type = str(at, 'Type');
    if (isSyntaxNode(type)) continue;
    if (at !== node && typeof at.ID === 'string' && parts.length > 0) parts.push('\n');
    if (TEXT_DATA.has(type) || (!Array.isArray(at.Children) && !KNOWN_CONTAINERS.has(type))) parts.push(str(at, 'Data'));
    if (type === 'NodeTextMark') parts.push(unescapeHtml(str(at, 'TextMarkTextContent') || str(at, 'TextMarkInlineMathContent')));
    const children = kids(at);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return parts.join('').replace(ZWSP, '');
}
/** Types whose `Data` (when they have no children) is a tag name, not text. */
const KNOWN_CONTAINERS = new Set(['NodeTableCell', 'NodeTableRow', 'NodeTableHead', 'NodeImage', 'NodeBackslash', 'NodeTextMark', 'NodeBr',
  'NodeTaskListItemMarker', 'NodeListItem', 'NodeSoftBreak', 'NodeHardBreak', 'NodeThematicBreak', 'NodeAttributeView']);

/** Where inline Markdown goes: a table cell cannot hold a line break or an unescaped `|`. */
export interface InlineWhere {
  cell: boolean;
  /** The block's id, for problems. */
  block: string;
}

/** A rendered span; `alt` is its HTML-tag form, used where its `*` or `~` delimiters would touch others. */
interface Piece { md: string; alt?: string }

/** Inline nodes → inline Markdown. A trailing `<br>` (an editor artifact SiYuan strips too) is dropped. */
export function inlineMarkdown(nodes: SyNode[], where: InlineWhere, found: Findings, depth = 0): string {
  let end = nodes.length;
  while (end > 0 && str(nodes[end - 1]!, 'Type') === 'NodeBr') end--;
  let out = '';
  // The last two characters of `out`, kept apart: reading them from `out` (an anchored pattern, or even
  // charCodeAt) flattens the string `+=` builds, every span, which made a paragraph of 40,000 bold spans take 8 s.
  let tail = '';
  for (let i = 0; i < end; i++) {
    const piece = inlineNode(nodes[i]!, where, found, depth);
    const touches = piece.alt !== undefined && endsWithOpenMark(tail) && (piece.md.startsWith('*') || piece.md.startsWith('~'));
    const added = touches ? piece.alt! : piece.md;
    out += added;
    tail = added.length >= 2 ? added.slice(-2) : (tail + added).slice(-2);
  }
  return out;
}

/** Whether the text ends with a `*` or `~` that no backslash escapes. */
function endsWithOpenMark(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return (last === 42 /* * */ || last === 126 /* ~ */) && text.charCodeAt(text.length - 2) !== 92 /* \ */;
}

function inlineNode(node: SyNode, where: InlineWhere, found: Findings, depth: number): Piece {
  const type = str(node, 'Type');
  if (isSyntaxNode(type)) return { md: '' };
  if (depth > MAX_INLINE_DEPTH) return { md: text(textOf(node), where) };
  const inner = (): string => inlineMarkdown(kids(node), where, found, depth + 1);
  switch (type) {
    case 'NodeText': return { md: text(str(node, 'Data').replace(ZWSP, ''), where) };
    case 'NodeTextMark': return textMark(node, where, found);
    case 'NodeBr': return { md: where.cell ? '<br>' : '\n' };
    case 'NodeSoftBreak': return { md: where.cell ? ' ' : '\n' };
    case 'NodeHardBreak': return { md: where.cell ? '<br>' : '\\\n' };
    case 'NodeImage': return { md: image(node, where, found) };
    case 'NodeBackslash': {
      const char = textOf(node);
      return { md: char.length === 1 && ASCII_PUNCTUATION.test(char) ? `\\${char}` : text(char, where) };
    }
    case 'NodeHTMLEntity': return { md: text(unescapeHtml(str(node, 'Data')), where) };
    case 'NodeInlineHTML': return { md: where.cell ? str(node, 'Data').replace(/\|/g, '\\|').replace(/\n/g, ' ') : str(node, 'Data') };
    case 'NodeEmoji': return { md: emoji(node, where) };
    // Older files: lute's nested nodes, markers as children.
    case 'NodeStrong': return wrap(inner(), 'strong');
    case 'NodeEmphasis': return wrap(inner(), 'em');
    case 'NodeStrikethrough': return wrap(inner(), 's');
    case 'NodeMark': case 'NodeSup': case 'NodeSub': case 'NodeKbd': case 'NodeUnderline':
      return wrap(inner(), OLD_TAGS[type]!);
    case 'NodeCodeSpan': return { md: codeSpan(textOf(node), where) };
    case 'NodeInlineMath': return { md: inlineMath(textOf(node), where) };
    case 'NodeTag': return { md: tag(textOf(node), where, found) };
    case 'NodeBlockRef': {
      const id = str(kids(node).find((c) => str(c, 'Type') === 'NodeBlockRefID') ?? {}, 'Data');
      const anchor = kids(node).find((c) => /^NodeBlockRef(Dynamic)?Text$/.test(str(c, 'Type')));
      const dynamic = anchor === undefined || str(anchor, 'Type') === 'NodeBlockRefDynamicText';
      return { md: blockRef(id, anchor ? str(anchor, 'Data') : '', dynamic, where, found) };
    }
    case 'NodeLink': {
      const part = (name: string): string => str(kids(node).find((c) => str(c, 'Type') === name) ?? {}, 'Data');
      const label = text(part('NodeLinkText') || part('NodeLinkDest'), where, true);
      return { md: link(label, part('NodeLinkDest'), part('NodeLinkTitle'), where, found) };
    }
    default:
      found.problem(`block ${where.block}: inline node ${type || '(no Type)'} is not known; kept as its text`);
      return { md: text(textOf(node), where) };
  }
}

const OLD_TAGS: Record<string, string> = { NodeMark: 'mark', NodeSup: 'sup', NodeSub: 'sub', NodeKbd: 'kbd', NodeUnderline: 'u' };
const DELIMITED: Record<string, [string, string]> = { strong: ['**', 'strong'], em: ['*', 'em'], s: ['~~', 'del'] };
const TAGGED = new Set(['u', 'sup', 'sub', 'kbd', 'mark']);
const PUNCTUATION_EDGE = /^[\p{P}\p{S}]|[\p{P}\p{S}]$/u;

/**
 * Emphasis around already-rendered Markdown. Spaces at the edges go outside the delimiters (inside,
 * they would keep `**` from opening or closing); text starting or ending with punctuation takes the
 * HTML form, which needs no flanking rules (`**"x"**` after a letter is no emphasis in CommonMark).
 */
function wrap(inner: string, kind: string): Piece {
  const lead = /^\s*/.exec(inner)![0];
  const trail = inner.length > lead.length ? /\s*$/.exec(inner)![0] : '';
  const core = inner.slice(lead.length, inner.length - trail.length);
  if (core === '') return { md: inner };
  const delimited = DELIMITED[kind];
  const tagName = delimited ? delimited[1] : TAGGED.has(kind) ? kind : undefined;
  if (!tagName) return { md: inner };
  const html = `${lead}<${tagName}>${core}</${tagName}>${trail}`;
  if (!delimited || PUNCTUATION_EDGE.test(core)) return { md: html };
  return { md: `${lead}${delimited[0]}${core}${delimited[0]}${trail}`, alt: html };
}

function textMark(node: SyNode, where: InlineWhere, found: Findings): Piece {
  const types = str(node, 'TextMarkType').split(' ').filter((t) => t !== '');
  const content = unescapeHtml(str(node, 'TextMarkTextContent'));
  const has = (t: string): boolean => types.includes(t);
  let md: string;
  if (has('block-ref')) {
    md = blockRef(str(node, 'TextMarkBlockRefID'), content, str(node, 'TextMarkBlockRefSubtype') !== 's', where, found);
  } else if (has('inline-math')) {
    md = inlineMath(unescapeHtml(str(node, 'TextMarkInlineMathContent')), where);
  } else if (has('tag')) {
    md = tag(content, where, found);
  } else if (has('a')) {
    const label = has('code') ? codeSpan(content, where) : text(content.replace(ZWSP, ''), where, true);
    md = link(label, unescapeHtml(str(node, 'TextMarkAHref')), unescapeHtml(str(node, 'TextMarkATitle')), where, found);
  } else if (has('code')) {
    md = codeSpan(content, where);
  } else {
    md = text(content.replace(ZWSP, ''), where);
  }
  if (has('inline-memo')) {
    const memo = unescapeHtml(str(node, 'TextMarkInlineMemoContent')).replace(/_esc_newline_/g, ' ');
    if (memo.trim() !== '') md += `<sup>(${text(memo, where)})</sup>`;
  }
  if (has('file-annotation-ref')) found.problem(`block ${where.block}: a reference to a PDF annotation (${str(node, 'TextMarkFileAnnotationRefID')}) is kept as its text`);
  for (const t of types) {
    if (!KNOWN_MARKS.has(t)) found.problem(`block ${where.block}: inline mark '${t}' is not known; its text is kept`);
  }
  // Markers go around the span, innermost first, as SiYuan's Markdown export nests them.
  let piece: Piece = { md };
  for (const t of ['mark', 'u', 'sup', 'sub', 'kbd', 's', 'em', 'strong']) {
    if (has(t)) piece = wrap(piece.md, t);
  }
  return piece;
}

const KNOWN_MARKS = new Set(['strong', 'em', 's', 'code', 'mark', 'u', 'sup', 'sub', 'kbd', 'tag', 'block-ref', 'a', 'inline-math',
  'inline-memo', 'text', 'file-annotation-ref']);

function blockRef(id: string, anchor: string, dynamic: boolean, where: InlineWhere, found: Findings): string {
  const label = anchor.replace(ZWSP, '').replace(/\s*\n\s*/g, ' ');
  if (!isValidId(id)) {
    found.problem(`block ${where.block}: a block reference has no valid id (${JSON.stringify(id)}); kept as its text`);
    return text(label, where);
  }
  found.refs.add(id);
  if (label.trim() === '') return `((${id}))`;
  // Static anchors in double quotes, dynamic ones in single (SiYuan's own Markdown form); a quote the
  // anchor holds takes the other, and an anchor holding both keeps no text (the ref itself is kept).
  const quote = dynamic ? (label.includes("'") ? '"' : "'") : (label.includes('"') ? "'" : '"');
  if (label.includes(quote)) {
    found.problem(`block ${where.block}: the anchor text of a reference to ${id} holds both kinds of quote; the reference is kept without it`);
    return `((${id}))`;
  }
  return `((${id} ${quote}${where.cell ? label.replace(/\|/g, '\\|') : label}${quote}))`;
}

function tag(content: string, where: InlineWhere, found: Findings): string {
  const name = content.replace(ZWSP, '').replace(/\s+/g, ' ').trim();
  if (name === '' || name.includes('#') || (where.cell && name.includes('|'))) {
    if (name !== '') found.problem(`block ${where.block}: the tag ${JSON.stringify(name)} cannot be written as #tag#; kept as text`);
    return text(name, where);
  }
  return `#${name}#`;
}

function codeSpan(content: string, where: InlineWhere): string {
  let code = where.cell ? content.replace(/\n/g, ' ').replace(/\|/g, '\\|') : content;
  if (code === '') return '';
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  // A fence of three backticks would be read as a code block's at the start of a line: HTML instead.
  if (longest >= 2) return `<code>${text(content, where)}</code>`;
  const fence = '`'.repeat(longest + 1);
  // A space either side keeps a backtick at an edge apart from the fence; CommonMark strips one each side.
  if (code.startsWith('`') || code.endsWith('`') || spacedBothSides(code)) code = ` ${code} `;
  return `${fence}${code}${fence}`;
}

/** A space at each end and something else between (`/^ .*[^ ].* $/s`, which took quadratic time on a long span). */
function spacedBothSides(code: string): boolean {
  return code.length >= 3 && code.startsWith(' ') && code.endsWith(' ') && /[^ ]/.test(code);
}

function inlineMath(tex: string, where: InlineWhere): string {
  const value = tex.replace(/_esc_newline_/g, ' ').trim();
  if (value === '') return '';
  return `$${where.cell ? value.replace(/\n/g, ' ').replace(/\|/g, '\\|') : value}$`;
}

function image(node: SyNode, where: InlineWhere, found: Findings): string {
  const part = (name: string): string => str(kids(node).find((c) => str(c, 'Type') === name) ?? {}, 'Data');
  return `!${link(text(part('NodeLinkText').replace(/\n/g, ' '), where, true), part('NodeLinkDest'), part('NodeLinkTitle'), where, found)}`;
}

/** `[label](destination "title")`: spaces and angle brackets in the destination percent-encoded, parentheses escaped. */
function link(label: string, href: string, title: string, where: InlineWhere, found: Findings): string {
  found.asset(href.trim());
  const dest = href.trim().replace(where.cell ? /[ \t\n<>|]/g : /[ \t\n<>]/g, (c) => encodeURIComponent(c)).replace(/[()\\]/g, '\\$&');
  const quoted = title.replace(/[\\"]/g, '\\$&').replace(/\n/g, ' ');
  const suffix = title === '' ? '' : ` "${where.cell ? quoted.replace(/\|/g, '\\|') : quoted}"`;
  return `[${label}](${dest}${suffix})`;
}

function emoji(node: SyNode, where: InlineWhere): string {
  const children = kids(node);
  const unicode = children.find((c) => str(c, 'Type') === 'NodeEmojiUnicode');
  if (unicode) return text(str(unicode, 'Data'), where);
  const img = children.find((c) => str(c, 'Type') === 'NodeEmojiImg');
  if (img && !where.cell) return str(img, 'Data');
  return text(textOf(node), where);
}

const WORD = /[\p{L}\p{N}]/u;
const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const ENTITY_AHEAD = /^&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});/;

/**
 * Plain text as inline Markdown that reads back as itself: what could open a code span, math,
 * emphasis, a link, a ref `((`, a tag `#x#`, an HTML tag, an entity or an embed `{{` is escaped; other
 * punctuation is left alone. In a link's label `]` is escaped too; in a table cell, `|` and line breaks.
 */
export function text(value: string, where: Pick<InlineWhere, 'cell'>, label = false): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const next = value[i + 1] ?? '';
    switch (c) {
      case '\\': out += next === '' || next === '\n' || ASCII_PUNCTUATION.test(next) ? '\\\\' : '\\'; break;
      case '`': case '*': case '$': case '~': case '[': out += `\\${c}`; break;
      case ']': out += label ? '\\]' : ']'; break;
      case '_': out += WORD.test(value[i - 1] ?? '') && WORD.test(next) ? '_' : '\\_'; break;
      case '<': out += /[A-Za-z/!?]/.test(next) ? '\\<' : '<'; break;
      case '&': out += ENTITY_AHEAD.test(value.slice(i, i + 40)) ? '\\&' : '&'; break;
      // `#` followed by a space can open no tag (`C# and F#` stays as it is).
      case '#': out += next === '' || !/\s/.test(next) ? '\\#' : '#'; break;
      // The second of `((` and `{{`: Quire's ref scanner looks for `((` whatever precedes it.
      case '(': case '{': out += value[i - 1] === c ? `\\${c}` : c; break;
      case '|': out += where.cell ? '\\|' : '|'; break;
      case '\n': out += where.cell ? '<br>' : '\n'; break;
      case '\r': break;
      default: out += c;
    }
  }
  return out;
}
