import { KernelError } from '../../core/index.js';

/**
 * How deep blocks may nest below their document (the document at depth 0, its children at 1): the
 * one limit that both the document file reader (document-file.ts) and every write check, so that
 * what a write accepts always reads back after a restart or a rebuild. Deep enough for any real
 * outline (63 nested quotes, 31 nested lists: a list level is a list and its item); shallow enough
 * that reading, indexing and writing a file recurse a bounded number of times. The file's JSON nests
 * about twice as deep (a children array between each block and the next), far from any limit.
 */
export const MAX_BLOCK_DEPTH = 64;

interface Nested { children?: readonly Nested[] | undefined }

/**
 * How many levels `blocks` span: 1 for leaves, 2 for a quote around a paragraph. Without recursion,
 * so that a tree of any depth is measured rather than overflowing the stack first.
 */
export function treeHeight(blocks: readonly Nested[]): number {
  let height = 0;
  const stack: [readonly Nested[], number][] = [[blocks, 1]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [level, depth] = top;
    for (const block of level) {
      if (depth > height) height = depth;
      if (block.children && block.children.length > 0) stack.push([block.children, depth + 1]);
    }
  }
  return height;
}

/** The answer to a write that would nest blocks deeper than the limit: which input, how deep, the limit. */
export function tooDeep(field: string, depth: number, details: Record<string, unknown> = {}): KernelError {
  return new KernelError('INVALID_INPUT',
    `This would nest blocks ${depth} levels deep; documents hold at most ${MAX_BLOCK_DEPTH}. Nest the quotes and lists in '${field}' less deeply, or put them higher in the document`,
    { details: { field, depth, limit: MAX_BLOCK_DEPTH, ...details } });
}

/** Refuses `blocks` placed under a parent at `parentDepth` when the deepest of them would pass the limit. */
export function assertDepthFits(parentDepth: number, blocks: readonly Nested[], field: string): void {
  const depth = parentDepth + treeHeight(blocks);
  if (depth > MAX_BLOCK_DEPTH) throw tooDeep(field, depth);
}
