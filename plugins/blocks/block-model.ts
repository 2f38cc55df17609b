/**
 * The block tree as it is stored in a document file (DESIGN.md §3). A document file is the document
 * block itself, pretty-printed with a stable key order.
 */
export type BlockType =
  | 'document' | 'heading' | 'paragraph' | 'list' | 'listItem' | 'code' | 'math' | 'table'
  | 'blockquote' | 'callout' | 'thematicBreak' | 'html' | 'embed';

export const BLOCK_TYPES: readonly BlockType[] = Object.freeze([
  'document', 'heading', 'paragraph', 'list', 'listItem', 'code', 'math', 'table',
  'blockquote', 'callout', 'thematicBreak', 'html', 'embed',
]);

/** Blocks that hold other blocks; every other type is a leaf with `content`. */
export const CONTAINER_TYPES: ReadonlySet<BlockType> = new Set(['document', 'list', 'listItem', 'blockquote', 'callout']);

export interface Block {
  id: string;
  type: BlockType;
  /**
   * heading: h1..h6; list: ordered | unordered | task (an ordered list of tasks is ordered, its items
   * task); listItem: task (absent otherwise); code: the fence's info string, its language first
   * (`js title="a.js"`; absent when none); callout: note | tip | important | warning | caution.
   */
  subtype?: string;
  /**
   * The Markdown source of a leaf block, without its container prefixes: a paragraph's or heading's
   * inline Markdown (no leading `#`), the code of a code block (no fences), the TeX of a math block
   * (no `$$`), a table's GFM source, the raw HTML of an html block, the inside of an embed's `{{ }}` (a ref or a query). For the
   * document block: its title.
   */
  content?: string;
  /** listItem with subtype task only. */
  checked?: boolean;
  /** list with subtype ordered: the number of the first item, when not 1. */
  start?: number;
  /** String map: `custom-*` for people; `created`, `updated`, `updatedBy` set by the system. */
  attrs: Record<string, string>;
  children?: Block[];
}

/** What a new block looks like before the store gives it attributes. */
export type DraftBlock = Omit<Block, 'id' | 'attrs' | 'children'> & { id?: string; attrs?: Record<string, string>; children?: DraftBlock[] };

export function isContainer(block: Pick<Block, 'type'>): boolean {
  return CONTAINER_TYPES.has(block.type);
}

/** Every block of a tree, parents before children, in document order. */
export function* walkBlocks(root: Block, parent: Block | undefined = undefined): Generator<{ block: Block; parent: Block | undefined; index: number }> {
  const stack: { block: Block; parent: Block | undefined; index: number }[] = [{ block: root, parent, index: 0 }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    yield entry;
    const children = entry.block.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push({ block: children[i]!, parent: entry.block, index: i });
  }
}
