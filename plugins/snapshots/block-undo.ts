import { writtenByOthers, type TreeBlock } from './turn-authorship.js';

/** A turn's undo inside one document: the blocks it changed, added and removed, put back where they can be. */

/**
 * A block's own fields (without its children and the system's time stamps), for comparing versions:
 * every write touches its document block's `updated`, which is not a change of the block's own.
 */
export function own(block: TreeBlock | undefined): string | undefined {
  if (!block) return undefined;
  const { children: _children, attrs, ...rest } = block;
  const { updated: _updated, updatedBy: _by, ...kept } = (attrs ?? {}) as Record<string, unknown>;
  return JSON.stringify({ ...rest, attrs: kept });
}

export function index(root: TreeBlock): Map<string, { block: TreeBlock; parent: TreeBlock | undefined; position: number }> {
  const out = new Map<string, { block: TreeBlock; parent: TreeBlock | undefined; position: number }>();
  const visit = (block: TreeBlock, parent: TreeBlock | undefined, position: number): void => {
    out.set(block.id, { block, parent, position });
    (block.children ?? []).forEach((child, i) => visit(child, block, i));
  };
  visit(root, undefined, 0);
  return out;
}

/**
 * Undoes, in `current`, the turn's block changes that took `before` to `after`, where `current` still
 * shows them; blocks stamped by someone else in between are not the turn's and stay, and in such a
 * (`mixed`) document a removed block is a conflict (nobody knows who removed it).
 */
export interface TreeUndoOptions {
  /** A turn cut short: only blocks carrying its own stamp are its (nothing records its end). */
  stampedOnly?: boolean;
  /** Blocks that were in other documents before the turn: one found here was moved in, never the turn's to remove. */
  olderElsewhere?: ReadonlySet<string>;
  /** Blocks that are in another document now: never put back here too (they would be in two). */
  elsewhereNow?: ReadonlySet<string>;
}

/** Whether the turn (`agent:<session>/<turn>`) wrote this block last, by its stamp. */
export function stampedBy(turn: string, block: TreeBlock): boolean {
  const by = ((block.attrs ?? {}) as Record<string, unknown>).updatedBy;
  return typeof by === 'string' && by.startsWith(`${turn}/`);
}

export function undoInTree(before: TreeBlock, after: TreeBlock, current: TreeBlock, turn: string, mixed: boolean, force: boolean, conflict: (id: string) => void, options: TreeUndoOptions = {}): number {
  const { stampedOnly = false, olderElsewhere = new Set<string>(), elsewhereNow = new Set<string>() } = options;
  const then = index(before);
  const done = index(after);
  const live = index(current);
  let undone = 0;
  // Blocks older than the turn found inside a block the turn added (a paragraph it moved into a list sits
  // in the item the move made): they go back to where they were, never out with the added block.
  const lifted: { block: TreeBlock; parent: TreeBlock; at: number }[] = [];
  // Added blocks taken out: one inside them went with them (its older blocks were lifted with theirs).
  const removed = new Set<string>();
  const inRemoved = (id: string): boolean => {
    for (let up = live.get(id)?.parent; up; up = live.get(up.id)?.parent) if (removed.has(up.id)) return true;
    return false;
  };
  for (const [id, entry] of done) {
    const old = then.get(id);
    if (old && own(old.block) === own(entry.block)) continue;
    // Written while the turn ran, by someone else: not the turn's change, kept as it is. A turn cut short:
    // a block without the turn's stamp (a hand edit, the watcher, no stamp at all) is not known to be its.
    if (writtenByOthers(turn, old?.block, entry.block) || (stampedOnly && !stampedBy(turn, entry.block))) continue;
    const present = live.get(id);
    if (!present) continue;
    // Older than the turn, in another document then: moved in (with its container), not made by the turn.
    if (!old && olderElsewhere.has(id)) { conflict(id); continue; }
    // As it was before the turn already (an undo a kill cut short, or a person's own fix): nothing to undo.
    if (old && own(present.block) === own(old.block)) continue;
    if (own(present.block) !== own(entry.block) && !force) { conflict(id); continue; }
    if (old) {
      // Changed by the turn: its own fields go back; its children stay as they are now.
      for (const key of Object.keys(present.block)) if (key !== 'children') delete present.block[key];
      Object.assign(present.block, { ...old.block, children: present.block.children });
      if (old.block.children === undefined) delete present.block.children;
    } else if (present.parent) {
      if (inRemoved(id)) continue;
      const { older, others } = contentsOf(present.block, then, done);
      // Each older block goes back under its old parent, which must be there (or come back below); a
      // block someone added inside it since is theirs: else the added block stays, for the person to decide.
      const returns = (block: TreeBlock): boolean => {
        const parentId = then.get(block.id)!.parent?.id;
        return parentId !== undefined && (live.has(parentId) || (!done.has(parentId) && (!mixed || force)));
      };
      if ((others && !force) || !older.every(returns)) { conflict(id); continue; }
      const at = present.parent.children!.indexOf(present.block);
      for (const block of older) lifted.push({ block, parent: present.parent, at });
      present.parent.children!.splice(at, 1);
      removed.add(id);
    }
    undone++;
  }
  const liftedIds = new Set(lifted.map(({ block }) => block.id));
  for (const [id, old] of then) {
    if (done.has(id) || live.has(id) || !old.parent) continue;
    // In another document now (moved there since): put back here too, it would be in two, forced or not.
    if (elsewhereNow.has(id)) {
      if (live.has(old.parent.id)) conflict(id);
      continue;
    }
    // In a document someone else also wrote to, who removed it is unknown: it is the person's to bring back.
    if (mixed && !force) {
      conflict(id);
      continue;
    }
    // Removed by the turn and still absent: back under its parent, if that is still there.
    const parent = live.get(old.parent.id)?.block;
    if (!parent?.children) continue;
    // Without the blocks that are in the tree still, elsewhere (moved out by the turn): never twice; nor
    // those the turn left in place that someone removed since.
    parent.children.splice(Math.min(old.position, parent.children.length), 0, without(structuredClone(old.block), (block) => live.has(block.id) || liftedIds.has(block.id) || done.has(block.id) || elsewhereNow.has(block.id)));
    undone++;
  }
  if (lifted.length > 0) {
    const now = index(current);
    for (const { block, parent: holder, at } of lifted) {
      const old = then.get(block.id)!;
      const parent = old.parent ? now.get(old.parent.id)?.block : undefined;
      if (parent?.children) {
        parent.children.splice(Math.min(old.position, parent.children.length), 0, block);
        continue;
      }
      // Its old parent is gone: it stays where the added block was, for the person to place.
      holder.children!.splice(Math.min(at, holder.children!.length), 0, block);
      conflict(block.id);
    }
  }
  return undone;
}

/**
 * What a block the turn added holds now: the outermost blocks older than the turn, and whether anything
 * is in it that is neither older nor the turn's (added by someone since).
 */
function contentsOf(block: TreeBlock, then: ReadonlyMap<string, unknown>, done: ReadonlyMap<string, unknown>): { older: TreeBlock[]; others: boolean } {
  const older: TreeBlock[] = [];
  let others = false;
  const visit = (node: TreeBlock): void => {
    for (const child of node.children ?? []) {
      if (then.has(child.id)) older.push(child);
      else if (!done.has(child.id)) others = true;
      else visit(child);
    }
  };
  visit(block);
  return { older, others };
}

/** The tree without the blocks `drop` picks (and what is inside them). */
function without(block: TreeBlock, drop: (block: TreeBlock) => boolean): TreeBlock {
  if (block.children) block.children = block.children.filter((child) => !drop(child)).map((child) => without(child, drop));
  return block;
}
