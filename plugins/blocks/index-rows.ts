import { createHash } from 'node:crypto';
import type { Block } from './block-model.js';
import { isContainer } from './block-model.js';
import { parseRefs, parseTags, plainText } from './inline-syntax.js';

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
  markdown: string;
  sort: number;
  created: string | null;
  updated: string | null;
  updated_by: string | null;
  fingerprint: string;
}

export interface DerivedBlock {
  row: BlockRow;
  attrs: [string, string][];
  refs: { def: string; anchor: string | null }[];
  tags: string[];
}

/** Every index row a document yields; a pure function of the file and its place (so rebuilds match). */
export function deriveRows(root: Block, place: DocumentPlace): DerivedBlock[] {
  const out: DerivedBlock[] = [];
  const visit = (block: Block, parentId: string | null, sort: number): void => {
    out.push(deriveBlock(block, root.id, parentId, sort, place));
    const children = block.children;
    if (children) for (let i = 0; i < children.length; i++) visit(children[i]!, block.id, i);
  };
  visit(root, null, 0);
  return out;
}

function deriveBlock(block: Block, rootId: string, parentId: string | null, sort: number, place: DocumentPlace): DerivedBlock {
  const leaf = !isContainer(block);
  const source = block.content ?? '';
  const attrs = Object.keys(block.attrs).sort().map((name): [string, string] => [name, block.attrs[name]!]);
  const refs = leaf ? parseRefs(source).map((ref) => ({ def: ref.id, anchor: ref.anchor ?? null })) : [];
  const tags = leaf ? [...new Set(parseTags(source))] : [];
  const row: Omit<BlockRow, 'fingerprint'> = {
    id: block.id,
    parent_id: parentId,
    root_id: rootId,
    notebook: place.notebook,
    path: place.path,
    hpath: place.hpath,
    type: block.type,
    subtype: block.subtype ?? null,
    content: block.type === 'document' ? source : leaf ? plainText(block) : '',
    markdown: leaf ? leafMarkdown(block) : '',
    sort,
    created: block.attrs.created ?? null,
    updated: block.attrs.updated ?? null,
    updated_by: block.attrs.updatedBy ?? null,
  };
  // The fingerprint covers everything the index derives from this block, so an unchanged block is
  // never rewritten when its document is saved.
  const fingerprint = createHash('sha1').update(JSON.stringify([row, attrs, block.checked ?? null, block.start ?? null])).digest('base64url');
  return { row: { ...row, fingerprint }, attrs, refs, tags };
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
