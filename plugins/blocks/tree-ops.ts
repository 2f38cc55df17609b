import { KernelError, newId } from '../../core/index.js';
import type { Block, BlockType, DraftBlock } from './block-model.js';
import { isContainer } from './block-model.js';
import { stampNew } from './provenance.js';

export interface Located {
  block: Block;
  parent: Block | undefined;
  index: number;
  /** Ancestors from the document block down to the parent. */
  ancestors: Block[];
}

/** Finds a block in a document tree. */
export function locate(root: Block, id: string): Located | undefined {
  if (root.id === id) return { block: root, parent: undefined, index: 0, ancestors: [] };
  const path: Block[] = [];
  const search = (node: Block): Located | undefined => {
    path.push(node);
    const children = node.children ?? [];
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (child.id === id) return { block: child, parent: node, index: i, ancestors: [...path] };
      if (child.children) {
        const found = search(child);
        if (found) return found;
      }
    }
    path.pop();
    return undefined;
  };
  return search(root);
}

/** Which blocks may hold which: lists hold list items only, and list items live only in lists. */
export function canContain(parent: BlockType, child: BlockType): boolean {
  if (child === 'document') return false;
  if (parent === 'list') return child === 'listItem';
  if (child === 'listItem') return false;
  return isContainer({ type: parent });
}

export function assertCanContain(parent: Block, children: readonly Block[]): void {
  for (const child of children) {
    if (!canContain(parent.type, child.type)) {
      throw new KernelError('INVALID_INPUT', `A ${parent.type} block cannot hold a ${child.type} block (${parent.type === 'list' ? 'a list holds list items only' : child.type === 'listItem' ? 'list items belong in a list' : `${parent.type} blocks hold no children`})`,
        { details: { parentId: parent.id, parentType: parent.type, childType: child.type } });
    }
  }
}

/**
 * Turns drafts (from Markdown) into blocks with fresh ids and this caller's stamps; `keepUpdated` (an
 * import) keeps the times of change the source gave (stampNew).
 */
export function materialise(drafts: readonly DraftBlock[], by: string, now: Date = new Date(), keepUpdated = false): Block[] {
  return drafts.map((draft) => {
    const block: Block = { ...draft, id: draft.id ?? newId(now), attrs: { ...(draft.attrs ?? {}) }, children: undefined };
    if (draft.children) block.children = materialise(draft.children, by, now, keepUpdated);
    else delete block.children;
    stampNew(block, by, now, keepUpdated);
    return block;
  });
}

export function countBlocks(block: Block): number {
  let count = 1;
  for (const child of block.children ?? []) count += countBlocks(child);
  return count;
}

/** Every id in a subtree. */
export function subtreeIds(block: Block, into: Set<string> = new Set()): Set<string> {
  into.add(block.id);
  for (const child of block.children ?? []) subtreeIds(child, into);
  return into;
}

/**
 * Takes a list left without items out of `holder` (its parent): a list of no items has no Markdown
 * form, and stayed in the tree (and the index) as a block nobody could see. Returns the list if it went.
 */
export function dropIfEmptyList(list: Block | undefined, holder: Block | undefined): Block | undefined {
  if (list?.type !== 'list' || (list.children?.length ?? 0) > 0 || !holder?.children) return undefined;
  const index = holder.children.indexOf(list);
  if (index === -1) return undefined;
  holder.children.splice(index, 1);
  return list;
}

/**
 * A block moved where it cannot stand alone, in the container that lets it: a paragraph (or any block
 * but a list item) moved into a list goes into a new list item, a list item moved out of a list into a
 * new list of its old list's kind, as an insert of the same Markdown would do. Undefined when it fits.
 */
export function holderFor(parent: Block, block: Block, formerList: Block | undefined, by: string, now: Date): Block | undefined {
  if (parent.type === 'list' && block.type !== 'listItem') {
    const [item] = materialise([{ type: 'listItem', children: [] }], by, now);
    item!.children = [block];
    return item;
  }
  if (parent.type !== 'list' && block.type === 'listItem' && isContainer(parent)) {
    const subtype = formerList?.type === 'list' && formerList.subtype !== undefined ? formerList.subtype : block.subtype === 'task' ? 'task' : 'unordered';
    const [list] = materialise([{ type: 'list', subtype, children: [] }], by, now);
    list!.children = [block];
    return list;
  }
  return undefined;
}
