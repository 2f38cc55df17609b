import type { Block } from './block-model.js';
import { isContainer } from './block-model.js';
import { inlineMarks, plainText } from './inline-syntax.js';

/** Where a document sits, as the index records it. */
export interface DocumentPlace {
  notebook: string;
  /** The file path relative to data/, e.g. `<notebook>/<parent>/<doc>.json`. */
  path: string;
  /** The titles from the notebook down, e.g. `/Projects/Quire`. */
  hpath: string;
}

export interface BlockRow {
  id: string;
  parent_id: string | null;
  root_id: string;
  notebook: string;
  path: string;
  hpath: string;
  type: string;
  subtype: string | null;
  content: string;
  /** NULL when it is the same as `content` (most paragraphs): the text is then stored once. */
  markdown: string | null;
  sort: number;
  created: string | null;
  updated: string | null;
  updated_by: string | null;
  fingerprint: string;
  /** A task list item: 1 done, 0 open; NULL for every other block (schema 8: open tasks were not queryable). */
  checked: 0 | 1 | null;
}

export interface DerivedBlock {
  row: BlockRow;
  attrs: [string, string][];
  refs: { def: string; anchor: string | null }[];
  tags: string[];
}

/** Attributes the blocks table already holds as columns; the attributes table keeps the others. */
const COLUMN_ATTRS: ReadonlySet<string> = new Set(['created', 'updated', 'updatedBy']);

/**
 * A block's own fingerprint (type, subtype, content, flags, attributes; not its children or place),
 * remembered on the block object under a symbol key: the copy made for a change carries it along
 * (object spread copies symbol keys; JSON does not write them), so that saving a large document
 * re-derives only the blocks that changed. Anything that changes a block in place must call
 * `forgetFingerprint` (touch() does). A WeakMap did the same at four times the cost of each copy.
 */
const FINGERPRINT = Symbol('quire.fingerprint');

type Remembered = Block & { [FINGERPRINT]?: string | undefined };

export function ownFingerprint(block: Block): string {
  const memo = block as Remembered;
  let fingerprint = memo[FINGERPRINT];
  if (fingerprint === undefined) {
    const attrs = Object.keys(block.attrs).sort().map((name) => [name, block.attrs[name]]);
    fingerprint = hash53(JSON.stringify([block.type, block.subtype ?? null, block.content ?? null, block.checked ?? null, block.start ?? null, attrs]));
    memo[FINGERPRINT] = fingerprint;
  }
  return fingerprint;
}

export function forgetFingerprint(block: Block): void {
  (block as Remembered)[FINGERPRINT] = undefined;
}

/** A copy of a tree to change, keeping what is known about its unchanged blocks. */
export function cloneTree(block: Block): Block {
  const copy = copyOwn(block);
  copy.attrs = copyOwn(block.attrs);
  if (block.children) copy.children = block.children.map(cloneTree);
  return copy;
}

/**
 * The object's own enumerable properties, symbol keys included, as a spread copies them. Object.assign
 * does that at less than half the cost per block (a large document is copied on every write), but it
 * sets `__proto__` rather than defining it: an object holding that key (a hand-edited file) is spread.
 */
function copyOwn<T extends object>(value: T): T {
  return Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
}

/** Every index row a block yields; a pure function of the block and its place (so rebuilds match). */
export function deriveBlock(block: Block, rootId: string, parentId: string | null, sort: number, place: DocumentPlace): DerivedBlock {
  const leaf = !isContainer(block);
  const source = block.content ?? '';
  const attrs = Object.keys(block.attrs).filter((name) => !COLUMN_ATTRS.has(name)).sort().map((name): [string, string] => [name, block.attrs[name]!]);
  const marks = hasInlineSyntax(block) ? inlineMarks(source) : undefined;
  const refs = marks ? marks.refs.map((ref) => ({ def: ref.id, anchor: ref.anchor ?? null })) : [];
  const tags = marks ? marks.tags : [];
  const content = block.type === 'document' ? source : leaf ? plainText(block) : '';
  const markdown = leaf ? leafMarkdown(block) : '';
  const row: BlockRow = {
    id: block.id,
    parent_id: parentId,
    root_id: rootId,
    notebook: place.notebook,
    path: place.path,
    hpath: place.hpath,
    type: block.type,
    subtype: block.subtype ?? null,
    content,
    markdown: markdown === content ? null : markdown,
    sort,
    created: block.attrs.created ?? null,
    updated: block.attrs.updated ?? null,
    updated_by: block.attrs.updatedBy ?? null,
    fingerprint: ownFingerprint(block),
    checked: block.checked === undefined ? null : block.checked ? 1 : 0,
  };
  return { row, attrs, refs, tags };
}

/** Code, math and raw HTML are not Markdown text: `#if x#` in C is not a tag. */
const VERBATIM: ReadonlySet<string> = new Set(['code', 'math', 'html']);

function hasInlineSyntax(block: Block): boolean {
  return !isContainer(block) && !VERBATIM.has(block.type);
}

/** cyrb53: a fast 53-bit string hash; it detects changes, it is not a security boundary. */
function hash53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** A leaf block's own Markdown, as one would write it at the top level of a document. */
export function leafMarkdown(block: Block): string {
  const content = block.content ?? '';
  switch (block.type) {
    case 'heading': return `${'#'.repeat(Number(block.subtype?.slice(1)) || 1)} ${content}`;
    case 'code': {
      const fence = content.includes('```') ? '~~~~' : '```';
      return `${fence}${block.subtype ?? ''}\n${content}\n${fence}`;
    }
    case 'math': return `$$\n${content}\n$$`;
    case 'thematicBreak': return '---';
    case 'embed': return `{{${content}}}`;
    default: return content;
  }
}
