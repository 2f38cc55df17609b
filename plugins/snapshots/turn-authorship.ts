/** A document file's block tree, as a turn's undo reads it. */
export interface TreeBlock { id: string; children?: TreeBlock[]; [key: string]: unknown }

/** A document's tree from a file's text, or undefined for a file that is not one (`.notebook.json`). */
export function treeOf(text: string): TreeBlock | undefined {
  try {
    const value = JSON.parse(text) as TreeBlock;
    return typeof value === 'object' && value !== null && typeof value.id === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a block's version in the turn's end snapshot was written by someone other than the turn:
 * stamped `updatedBy` another caller since the turn began (a block new since then, or whose stamp moved).
 * A block without a stamp counts as the turn's, as before stamps were compared.
 */
export function writtenByOthers(turn: string, old: TreeBlock | undefined, block: TreeBlock): boolean {
  const attrs = (block.attrs ?? {}) as Record<string, unknown>;
  const by = attrs.updatedBy;
  if (typeof by !== 'string' || by.startsWith(`${turn}/`)) return false;
  if (!old) return true;
  const was = (old.attrs ?? {}) as Record<string, unknown>;
  return was.updated !== attrs.updated || was.updatedBy !== by;
}
