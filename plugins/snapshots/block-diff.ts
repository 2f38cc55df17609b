/** Blocks added, removed and changed between two versions of a document file (JSON block trees). */
export interface BlockDiff { added: string[]; removed: string[]; changed: string[] }

interface BlockLike { id?: unknown; children?: unknown }

/** Each block's own fields (not its children), by id. */
function blocksOf(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (text === undefined) return out;
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return out;
  }
  const stack: unknown[] = [root];
  // Bounded by the file's size: every block is visited once.
  while (stack.length > 0) {
    const block = stack.pop() as BlockLike;
    if (typeof block !== 'object' || block === null || typeof block.id !== 'string') continue;
    const { children, ...own } = block as BlockLike & Record<string, unknown>;
    out.set(block.id, JSON.stringify(own));
    if (Array.isArray(children)) stack.push(...children);
  }
  return out;
}

export function blockDiff(before: string | undefined, after: string | undefined): BlockDiff {
  const old = blocksOf(before);
  const now = blocksOf(after);
  return {
    added: [...now.keys()].filter((id) => !old.has(id)).sort(),
    removed: [...old.keys()].filter((id) => !now.has(id)).sort(),
    changed: [...now.keys()].filter((id) => old.has(id) && old.get(id) !== now.get(id)).sort(),
  };
}
