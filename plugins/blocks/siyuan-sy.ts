/**
 * One SiYuan document file (`.sy`: the JSON of lute's block tree that SiYuan keeps under
 * `data/<notebook>/.../<docId>.sy`, and that its ".sy.zip" export holds) as Quire's draft blocks, ids,
 * references and attributes kept. The field names are lute's (`ast.Node`, encoded by Go: `[]byte`
 * fields such as `CodeBlockInfo` are base64); the reading follows SiYuan's own (siyuan-note/dataparser
 * and lute's Markdown export renderer). What has no Quire form is reported in `problems`.
 */
import { isValidId } from '../../core/index.js';
import type { DraftBlock } from './block-model.js';
import { MAX_BLOCK_DEPTH } from './block-depth.js';
import { ATTR_NAME } from './document-file.js';
import { protectParagraph } from './markdown-out.js';
import { Findings, inlineMarkdown, isNode, isSyntaxNode, kids, str, text, textOf, unescapeHtml, type SyNode } from './siyuan-inline.js';

export interface SiyuanDocument {
  id: string;
  title: string;
  attrs: Record<string, string>;
  children: DraftBlock[];
  /** What could not be kept as it was, one sentence each. */
  problems: string[];
  /** Every block id referenced (`((id))` and embeds of one block), in order of first use. */
  refs: string[];
  /** Every `assets/…` path used by images, links, video, audio and HTML, in order of first use. */
  assets: string[];
}

/** SiYuan's attributes that Quire has under the same name (searchable, settable: link-actions.ts). */
const SAME_NAME = new Set(['name', 'alias', 'memo', 'bookmark']);
/** SiYuan's document tags (`tags="a,b"`) have no Quire attribute; kept under this name. */
const TAGS_ATTR = 'custom-siyuan-tags';
const CALLOUTS = new Set(['note', 'tip', 'important', 'warning', 'caution']);
/** Code SiYuan renders itself (charts, diagrams) is stored HTML-escaped (lute's NoHighlight). */
const NO_HIGHLIGHT = new Set(['mermaid', 'echarts', 'abc', 'graphviz', 'mindmap', 'flowchart', 'plantuml', 'infographic']);
const ONE_BLOCK_QUERY = /^select\s+\*\s+from\s+blocks\s+where\s+id\s*=\s*(['"])(\d{14}-[0-9a-z]{7})\1\s*;?$/i;
const ASSET_ATTR = /\b(?:src|data-src|href|poster)\s*=\s*["'](assets\/[^"']+)["']/g;

/** Converts a `.sy` document (its parsed JSON, or its text); throws when the value is not one. */
export function siyuanToDrafts(json: unknown): SiyuanDocument {
  const root = documentNode(json);
  const id = nodeId(root)!;
  const convert = new Converter();
  const props = isNode(root.Properties) ? root.Properties : {};
  const attrs = convert.attrs(props, id);
  const spec = str(root, 'Spec');
  if (spec !== '' && spec !== '1' && spec !== '2') convert.found.problem(`the file is of SiYuan's Spec ${JSON.stringify(spec)}; read as Spec 2`);
  convert.seen.add(id);
  const children = convert.blocks(kids(root), 1);
  convert.reportFlattened();
  return {
    id,
    title: typeof props.title === 'string' ? unescapeAttr(props.title) : '',
    attrs,
    children,
    problems: convert.found.allProblems(),
    refs: [...convert.found.refs],
    assets: [...convert.found.assets],
  };
}

function documentNode(json: unknown): SyNode {
  let value = json;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error('Not a SiYuan document: the text is not valid JSON');
    }
  }
  if (!isNode(value)) throw new Error(`Not a SiYuan document: expected a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  if (value.Type !== 'NodeDocument') {
    throw new Error(`Not a SiYuan document: its "Type" is ${JSON.stringify(value.Type) ?? 'missing'}, expected "NodeDocument"`);
  }
  if (nodeId(value) === undefined) {
    const given = value.ID ?? (isNode(value.Properties) ? value.Properties.id : undefined);
    throw new Error(`Not a SiYuan document: its "ID" ${given === undefined ? 'is missing' : `${JSON.stringify(given)} is not a block id`} (expected YYYYMMDDhhmmss-xxxxxxx)`);
  }
  if (value.Children !== undefined && !Array.isArray(value.Children)) throw new Error('Not a SiYuan document: its "Children" is not an array');
  return value;
}

/** `ID`, else `Properties.id` (SiYuan keeps both, the first winning), when it is a valid id. */
function nodeId(node: SyNode): string | undefined {
  const id = typeof node.ID === 'string' && node.ID !== '' ? node.ID : isNode(node.Properties) ? node.Properties.id : undefined;
  return isValidId(id) ? id : undefined;
}

/** lute's attribute escaping undone (html.UnescapeAttrVal): `_esc_newline_`, `&#123;`, entities. */
function unescapeAttr(value: string): string {
  return unescapeHtml(value.replace(/_esc_newline_/g, '\n'));
}

/**
 * SiYuan's `updated` and the time an id begins with (YYYYMMDDhhmmss, no zone) as Quire's ISO stamp.
 * SiYuan writes the local time of the machine it ran on; it is read in this machine's zone, the best
 * guess for a person moving their own notes (read as UTC, a note in UTC+8 was off by eight hours, and
 * its last hours' edits fell in the future and were dropped).
 */
export function siyuanStamp(value: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, s);
  // A local time a clock change skips (or a day that does not exist) comes back as another time.
  const valid = date.getFullYear() === y && date.getMonth() === mo - 1 && date.getDate() === d && date.getHours() === h && date.getMinutes() === mi && date.getSeconds() === s;
  return valid && y >= 1970 ? date.toISOString() : undefined;
}

class Converter {
  readonly found = new Findings();
  readonly seen = new Set<string>();
  private readonly flattened: string[] = [];

  blocks(nodes: SyNode[], depth: number): DraftBlock[] {
    const out: DraftBlock[] = [];
    for (const node of nodes) {
      const type = str(node, 'Type');
      if (isSyntaxNode(type)) continue;
      if (type === 'NodeSuperBlock' && depth <= MAX_BLOCK_DEPTH) {
        // A layout of rows and columns: Quire has none, so its blocks take its place.
        const id = nodeId(node);
        this.flattened.push(id ?? '(no id)');
        if (id !== undefined) this.seen.add(id);
        // One level deeper only for the limit's sake: superblocks nested without end must not overflow the stack.
        out.push(...this.blocks(kids(node), depth + 1));
        continue;
      }
      out.push(this.block(node, depth));
    }
    return out;
  }

  reportFlattened(): void {
    const n = this.flattened.length;
    if (n === 0) return;
    const listed = this.flattened.slice(0, 5).join(', ') + (n > 5 ? `, and ${n - 5} more` : '');
    this.found.problem(`${n} superblock${n === 1 ? '' : 's'} (SiYuan's row/column layout) flattened: their blocks are kept in order, their own ids are not (${listed})`);
  }

  /** The node's id, claimed for this document; none (with a problem) when missing, invalid or repeated. */
  private own(node: SyNode): string | undefined {
    const id = nodeId(node);
    const type = str(node, 'Type');
    if (id === undefined) {
      this.found.problem(`a ${type} block has no valid id (${JSON.stringify(node.ID ?? null)}); it is given a new one`);
      return undefined;
    }
    if (this.seen.has(id)) {
      this.found.problem(`the id ${id} appears more than once; its ${type} block after the first is given a new one`);
      return undefined;
    }
    this.seen.add(id);
    return id;
  }

  private block(node: SyNode, depth: number): DraftBlock {
    const type = str(node, 'Type');
    const id = this.own(node);
    const label = id ?? `(${type})`;
    const draft = depth > MAX_BLOCK_DEPTH ? this.tooDeep(node, label) : this.shape(node, type, label, depth);
    if (id !== undefined) draft.id = id;
    const attrs = { ...this.attrs(isNode(node.Properties) ? node.Properties : {}, label), ...draft.attrs };
    if (Object.keys(attrs).length > 0) draft.attrs = attrs;
    else delete draft.attrs;
    return draft;
  }

  private tooDeep(node: SyNode, label: string): DraftBlock {
    this.found.problem(`block ${label} is nested deeper than ${MAX_BLOCK_DEPTH} levels; kept as a paragraph of its text`);
    return { type: 'paragraph', content: plainParagraph(node) };
  }

  private shape(node: SyNode, type: string, label: string, depth: number): DraftBlock {
    const inline = (cell = false): string => inlineMarkdown(kids(node), { cell, block: label }, this.found);
    const inner = (): DraftBlock[] => this.blocks(kids(node), depth + 1);
    switch (type) {
      case 'NodeParagraph': return { type: 'paragraph', content: paragraphContent(inline()) };
      case 'NodeHeading': {
        const level = Math.min(6, Math.max(1, Number(node.HeadingLevel) || 1));
        return { type: 'heading', subtype: `h${level}`, content: inline().replace(/\s*\n\s*/g, ' ').trim() };
      }
      case 'NodeList': return this.list(node, inner());
      case 'NodeListItem': return this.listItem(node, inner());
      case 'NodeBlockquote': return { type: 'blockquote', children: inner() };
      case 'NodeCallout': return this.callout(node, inner());
      case 'NodeCodeBlock': return this.code(node);
      case 'NodeMathBlock': return { type: 'math', content: trimNewline(unescapeHtml(childData(node, 'NodeMathBlockContent'))) };
      case 'NodeTable': return { type: 'table', content: this.table(node, label) };
      case 'NodeThematicBreak': return { type: 'thematicBreak' };
      case 'NodeHTMLBlock': case 'NodeInlineHTML': case 'NodeIFrame': case 'NodeVideo': case 'NodeAudio': case 'NodeWidget': {
        const html = trimNewline(str(node, 'Data'));
        for (const match of html.matchAll(ASSET_ATTR)) this.found.asset(match[1]!);
        return { type: 'html', content: html };
      }
      case 'NodeBlockQueryEmbed': return this.embed(node, label);
      case 'NodeAttributeView':
        this.found.problem(`block ${label}: a SiYuan database (NodeAttributeView ${str(node, 'AttributeViewID') || '?'}) has no Quire form; kept as an empty paragraph`);
        return { type: 'paragraph', content: '' };
      default:
        this.found.problem(`block ${label}: SiYuan block type ${type || '(no Type)'} is not known; kept as a paragraph of its text`);
        return { type: 'paragraph', content: plainParagraph(node) };
    }
  }

  private list(node: SyNode, items: DraftBlock[]): DraftBlock {
    const data = isNode(node.ListData) ? node.ListData : {};
    const task = items.length > 0 && items.every((item) => item.subtype === 'task');
    const draft: DraftBlock = { type: 'list', subtype: task ? 'task' : data.Typ === 1 ? 'ordered' : 'unordered', children: items };
    if (draft.subtype === 'ordered') {
      const first = kids(node).find((child) => str(child, 'Type') === 'NodeListItem');
      const firstData = first && isNode(first.ListData) ? first.ListData : {};
      const start = Number.isInteger(data.Start) ? data.Start : firstData.Num;
      if (Number.isInteger(start) && (start as number) >= 0 && start !== 1) draft.start = start as number;
    }
    return draft;
  }

  private listItem(node: SyNode, children: DraftBlock[]): DraftBlock {
    const data = isNode(node.ListData) ? node.ListData : {};
    const marker = kids(node).find((child) => str(child, 'Type') === 'NodeTaskListItemMarker');
    const draft: DraftBlock = { type: 'listItem', children };
    if (marker || data.Typ === 3) {
      draft.subtype = 'task';
      // Newer files keep the character between the brackets (a number: Go's byte); any but a space is done.
      const char = marker?.TaskListItemMarker;
      draft.checked = marker?.TaskListItemChecked === true || (typeof char === 'number' && char !== 32 && char !== 0) || data.Checked === true;
    }
    return draft;
  }

  private callout(node: SyNode, children: DraftBlock[]): DraftBlock {
    const original = str(node, 'CalloutType');
    const kind = original.toLowerCase();
    const draft: DraftBlock = { type: 'callout', subtype: CALLOUTS.has(kind) ? kind : 'note', children, attrs: {} };
    if (!CALLOUTS.has(kind)) {
      draft.attrs!['custom-callout'] = original;
      this.found.problem(`block ${nodeId(node) ?? '(NodeCallout)'}: callout type ${JSON.stringify(original)} has no Quire form; made a note, the type kept in custom-callout`);
    }
    const title = unescapeHtml(str(node, 'CalloutTitle')).trim();
    if (title !== '' && title.toLowerCase() !== kind) draft.attrs!['custom-callout-title'] = title;
    return draft;
  }

  private code(node: SyNode): DraftBlock {
    const marker = kids(node).find((child) => str(child, 'Type') === 'NodeCodeBlockFenceInfoMarker');
    const info = bytesField(marker?.CodeBlockInfo ?? node.CodeBlockInfo).trim();
    const language = info.split(/\s+/)[0] ?? '';
    const raw = childData(node, 'NodeCodeBlockCode');
    const draft: DraftBlock = { type: 'code', content: trimNewline(NO_HIGHLIGHT.has(language) ? unescapeHtml(raw) : raw) };
    // The whole info string, as a Markdown fence's is kept (`js title="a.js"`), the language first.
    if (language !== '') draft.subtype = info.replace(/\s+/g, ' ');
    return draft;
  }

  private embed(node: SyNode, label: string): DraftBlock {
    let script = childData(node, 'NodeBlockQueryEmbedScript');
    if (script === '') script = str(node, 'Data').trim().replace(/^\{\{([\s\S]*)\}\}$/, '$1');
    script = unescapeAttr(script).trim();
    const one = ONE_BLOCK_QUERY.exec(script);
    if (one) {
      this.found.refs.add(one[2]!);
      return { type: 'embed', content: `((${one[2]}))` };
    }
    if (script.startsWith('//!js')) {
      this.found.problem(`block ${label}: a JavaScript embed cannot run in Quire; kept as a js code block`);
      return { type: 'code', subtype: 'js', content: script };
    }
    if (script === '') {
      this.found.problem(`block ${label}: an embed without a query; kept as an empty paragraph`);
      return { type: 'paragraph', content: '' };
    }
    return { type: 'embed', content: script };
  }

  /** A GFM table: the head's row first, then the body's; cells padded to the widest row. */
  private table(node: SyNode, label: string): string {
    const rows: SyNode[] = [];
    for (const child of kids(node)) {
      const type = str(child, 'Type');
      if (type === 'NodeTableHead') rows.push(...kids(child).filter((row) => str(row, 'Type') === 'NodeTableRow'));
      else if (type === 'NodeTableRow') rows.push(child);
    }
    const aligns = Array.isArray(node.TableAligns) ? node.TableAligns : [];
    const cells = rows.map((row) => kids(row).filter((cell) => str(cell, 'Type') === 'NodeTableCell')
      .map((cell) => inlineMarkdown(kids(cell), { cell: true, block: label }, this.found).trim()));
    const width = Math.max(1, aligns.length, ...cells.map((row) => row.length));
    if (cells.length === 0) cells.push([]);
    const line = (row: string[]): string => `|${Array.from({ length: width }, (_, i) => (row[i] ? ` ${row[i]} ` : ' ')).join('|')}|`;
    const delimiter = Array.from({ length: width }, (_, i) => ALIGN[aligns[i] as number] ?? '---');
    return [line(cells[0]!), `| ${delimiter.join(' | ')} |`, ...cells.slice(1).map(line)].join('\n');
  }

  /** Properties → attributes: custom-* as they are; name, alias, memo, bookmark too; `updated` as a stamp, `created` from the id. */
  attrs(props: SyNode, label: string): Record<string, string> {
    const attrs: Record<string, string> = {};
    for (const [name, value] of Object.entries(props)) {
      if (typeof value !== 'string') continue;
      if (name.startsWith('custom-')) {
        if (ATTR_NAME.test(name)) attrs[name] = unescapeAttr(value);
        else this.found.problem(`block ${label}: attribute ${JSON.stringify(name)} is not a valid Quire attribute name; dropped`);
      } else if (SAME_NAME.has(name)) {
        attrs[name] = unescapeAttr(value);
      } else if (name === 'tags' && value.trim() !== '') {
        attrs[TAGS_ATTR] = unescapeAttr(value);
      } else if (name === 'updated') {
        const stamp = siyuanStamp(value);
        if (stamp !== undefined) attrs.updated = stamp;
      } else if (name === 'id') {
        // SiYuan keeps no creation time: its ids begin with it.
        const stamp = siyuanStamp(value.slice(0, 14));
        if (stamp !== undefined) attrs.created = stamp;
      }
    }
    return attrs;
  }
}

const ALIGN: Record<number, string> = { 0: '---', 1: ':--', 2: ':-:', 3: '--:' };

/** A node's words as a paragraph's content: escaped, so that they read back as themselves. */
function plainParagraph(node: SyNode): string {
  return paragraphContent(text(textOf(node), { cell: false }));
}

function childData(node: SyNode, type: string): string {
  const child = kids(node).find((c) => str(c, 'Type') === type);
  return child ? str(child, 'Data') : '';
}

function trimNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text;
}

/** A Go `[]byte` field: base64 in the JSON; a plain string (from other writers) when it does not decode cleanly. */
function bytesField(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  if (/^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0) {
    const decoded = Buffer.from(value, 'base64');
    const text = decoded.toString('utf8');
    if (decoded.toString('base64') === value && !text.includes('\ufffd') && !/[\x00-\x08\x0e-\x1f]/.test(text)) return text;
  }
  return value;
}

/**
 * A paragraph's inline Markdown as one Markdown paragraph: trimmed, no indentation on later lines (a
 * Markdown reader drops it), a blank line (which would split it) written as `<br>`, and line starts
 * that would open another block protected as markdown-out.ts protects them (its own copy of the
 * patterns lagged: a line starting with a code span of three backticks was escaped into other code,
 * and a later line of raw HTML such as `<div>` was left to become a block of HTML).
 */
function paragraphContent(markdown: string): string {
  if (markdown.trim() === '') return '';
  const lines = markdown.trim().split('\n').map((line, i) => (i === 0 ? line : line.replace(/^[ \t]+/, '')));
  return protectParagraph(lines.map((line) => (line.trim() === '' ? '<br>' : line)).join('\n'));
}
