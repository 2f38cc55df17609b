import { KernelError, wholeCharacterEnd, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlocksRuntime } from './runtime.js';
import { checkExpected, documentOfBlock, invalid } from './access.js';
import { assertDepthFits } from './block-depth.js';
import { blocksToMarkdown } from './markdown-out.js';
import { mutateDocument } from './mutate.js';
import { resultOfDocument } from './returned-notebooks.js';
import { keepIdentities } from './kept-identities.js';
import { touch, touchContainers, updatedBy } from './provenance.js';
import { assertCanContain, dropIfEmptyList, holderFor, locate, materialise, subtreeIds, type Located } from './tree-ops.js';

interface BlockRef { id: string }
interface InsertInput { markdown: string; parentId?: string; previousId?: string; nextId?: string }
interface UpdateInput { id: string; markdown: string; expectedUpdated?: string }
interface MoveInput { id: string; parentId?: string; previousId?: string; expectedUpdated?: string }

/** The block tool: read and change blocks inside documents. */
export function blockActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  const found = async (call: ActionCall, id: string): Promise<{ docId: string; root: Block; at: Located }> => {
    const docId = documentOfBlock(store, call, id);
    const root = await store.read(docId);
    const at = locate(root, id);
    if (!at) throw new KernelError('NOT_FOUND', `No block with id '${id}'`, { details: { id } });
    return { docId, root, at };
  };
  return {
    get: async (input, call) => {
      const { docId, at } = await found(call, (input as unknown as BlockRef).id);
      return describe(rt, docId, at.block, at.parent?.id ?? null);
    },
    get_children: async (input, call) => {
      const { id, offset = 0, limit } = input as { id: string; offset?: number; limit?: number };
      const { at } = await found(call, id);
      const all = at.block.children ?? [];
      if (offset > all.length) throw invalid(`offset ${offset} is past the block's ${all.length} children`, { field: 'offset' });
      // A page at a time on request: an MCP client sees 100,000 characters of an answer, some 300 summaries.
      const end = limit === undefined ? all.length : Math.min(all.length, offset + limit);
      return { id: at.block.id, children: all.slice(offset, end).map((child) => summary(child)), offset, total: all.length, next: end < all.length ? end : null };
    },
    batch_get: (input, call) => batchGet(rt, call, (input as { ids: string[] }).ids, found),
    insert: (input, call) => insert(rt, call, input as unknown as InsertInput),
    append: (input, call) => insert(rt, call, { ...(input as unknown as InsertInput), previousId: undefined, nextId: undefined }, 'last'),
    prepend: (input, call) => insert(rt, call, { ...(input as unknown as InsertInput), previousId: undefined, nextId: undefined }, 'first'),
    update: (input, call) => update(rt, call, input as unknown as UpdateInput),
    delete: (input, call) => deleteBlock(rt, call, input as { id: string; expectedUpdated?: string }),
    move: (input, call) => move(rt, call, input as unknown as MoveInput),
  };
}

type Finder = (call: ActionCall, id: string) => Promise<{ docId: string; at: Located }>;

/** Several blocks at once; those that do not exist (or that the caller may not see) are listed as missing. */
async function batchGet(rt: BlocksRuntime, call: ActionCall, ids: string[], found: Finder) {
  const blocks: unknown[] = [];
  const missing: string[] = [];
  // A damaged document file fails the blocks in it, not the whole batch.
  const unreadable: { id: string; message: string }[] = [];
  for (const id of ids) {
    try {
      const { docId, at } = await found(call, id);
      blocks.push(describe(rt, docId, at.block, at.parent?.id ?? null));
    } catch (error) {
      const code = (error as KernelError).code;
      if (code === 'WORKSPACE_INVALID') unreadable.push({ id, message: (error as KernelError).message });
      else if (code === 'NOT_FOUND') missing.push(id);
      else throw error;
    }
  }
  return { blocks, missing, ...(unreadable.length > 0 ? { unreadable } : {}) };
}

function deleteBlock(rt: BlocksRuntime, call: ActionCall, input: { id: string; expectedUpdated?: string }) {
  const { id, expectedUpdated } = input;
  const docId = documentOfBlock(rt.store, call, id);
  if (docId === id) throw invalid(`'${id}' is a document: use document remove`, { id });
  return mutateDocument(rt.store, docId, call, ({ root, by, now }) => {
    const at = mustLocate(root, id);
    checkExpected(at.block, expectedUpdated);
    at.parent!.children!.splice(at.index, 1);
    // The last item of a list takes the list with it.
    const list = dropIfEmptyList(at.parent, at.ancestors.at(-2));
    touchContainers(list ? at.ancestors.slice(0, -1) : at.ancestors, by, now);
    return resultOfDocument({ deleted: [...subtreeIds(at.block), ...(list ? [list.id] : [])], documentId: docId }, docId);
  });
}

function mustLocate(root: Block, id: string): Located {
  const at = locate(root, id);
  if (!at) throw new KernelError('NOT_FOUND', `No block with id '${id}' in document '${root.id}'`, { details: { id } });
  return at;
}

async function parseDrafts(rt: BlocksRuntime, call: ActionCall, markdown: string) {
  const drafts = await rt.parseMarkdown(markdown, call);
  if (drafts.length === 0) throw invalid('The Markdown holds no block', { field: 'markdown' });
  return drafts;
}

/** Insert relative to a sibling (previousId / nextId) or into a parent (parentId, as last or first child). */
async function insert(rt: BlocksRuntime, call: ActionCall, input: InsertInput, where: 'last' | 'first' = 'last') {
  const anchors = [input.parentId, input.previousId, input.nextId].filter((value) => value !== undefined);
  if (anchors.length !== 1) throw invalid('Give exactly one of parentId, previousId or nextId', { fields: ['parentId', 'previousId', 'nextId'] });
  const anchorId = anchors[0]!;
  const drafts = await parseDrafts(rt, call, input.markdown);
  const docId = documentOfBlock(rt.store, call, anchorId);
  return mutateDocument(rt.store, docId, call, ({ root, by, now }) => {
    const at = mustLocate(root, anchorId);
    let parent: Block;
    let index: number;
    if (input.parentId !== undefined) {
      parent = at.block;
      if (!parent.children) throw invalid(`Block '${anchorId}' is a ${parent.type} and holds no children`, { field: 'parentId' });
      index = where === 'first' ? 0 : parent.children.length;
    } else {
      if (!at.parent) throw invalid('A document has no siblings: use parentId to insert into it', { field: input.previousId ? 'previousId' : 'nextId' });
      parent = at.parent;
      index = input.previousId !== undefined ? at.index + 1 : at.index;
    }
    const blocks = adaptToParent(parent, materialise(drafts, by, now), by, now);
    // A parent's depth is the number of its ancestors; a sibling's parent is one less deep than it.
    assertDepthFits(input.parentId !== undefined ? at.ancestors.length : at.ancestors.length - 1, blocks, 'markdown');
    assertCanContain(parent, blocks);
    parent.children!.splice(index, 0, ...blocks);
    touchContainers(input.parentId !== undefined ? [...at.ancestors, parent] : at.ancestors, by, now);
    return resultOfDocument({ documentId: docId, parentId: parent.id, ids: blocks.map((block) => block.id), ...(parent.type !== 'document' && parent.attrs.updated !== undefined ? { parentUpdated: parent.attrs.updated } : {}) }, docId);
  });
}

/** Markdown list items inserted into a list arrive wrapped in a list; unwrap them so they join it. */
function adaptToParent(parent: Block, blocks: Block[], by: string, now: Date): Block[] {
  if (parent.type !== 'list') return blocks;
  return blocks.flatMap((block) => block.type === 'list' ? block.children ?? [] : [holderFor(parent, block, undefined, by, now)!]);
}

/** Replaces a block's content from Markdown; the first parsed block keeps the id, any others follow it. */
async function update(rt: BlocksRuntime, call: ActionCall, input: UpdateInput) {
  const drafts = await parseDrafts(rt, call, input.markdown);
  const docId = documentOfBlock(rt.store, call, input.id);
  if (docId === input.id) throw invalid(`'${input.id}' is a document: use document rename to change its title, or block append to add to it`, { field: 'id' });
  return mutateDocument(rt.store, docId, call, ({ root, by, now }) => {
    const at = mustLocate(root, input.id);
    checkExpected(at.block, input.expectedUpdated);
    const fresh = materialise(drafts, by, now);
    const [first, ...rest] = at.parent!.type === 'list' ? adaptToParent(at.parent!, fresh, by, now) : fresh;
    const kept: Block = { ...first!, id: at.block.id, attrs: { ...at.block.attrs } };
    touch(kept, by, now);
    // Its children keep their ids and attributes where they are the same blocks (kept-identities.ts).
    keepIdentities(kept, at.block, by, now);
    assertDepthFits(at.ancestors.length - 1, [kept, ...rest], 'markdown');
    assertCanContain(at.parent!, [kept, ...rest]);
    at.parent!.children!.splice(at.index, 1, kept, ...rest);
    touchContainers(at.ancestors, by, now);
    return resultOfDocument({ documentId: docId, id: kept.id, inserted: rest.map((block) => block.id), updated: kept.attrs.updated }, docId);
  });
}

async function move(rt: BlocksRuntime, call: ActionCall, input: MoveInput) {
  const { store } = rt;
  if ((input.parentId === undefined) === (input.previousId === undefined)) throw invalid('Give exactly one of parentId (move to first child) or previousId (move after)', { fields: ['parentId', 'previousId'] });
  const targetId = (input.parentId ?? input.previousId)!;
  if (targetId === input.id) throw invalid('A block cannot be moved relative to itself', { field: input.parentId ? 'parentId' : 'previousId' });
  const fromDoc = documentOfBlock(store, call, input.id);
  if (fromDoc === input.id) throw invalid(`'${input.id}' is a document: use document move`, { field: 'id' });
  const toDoc = documentOfBlock(store, call, targetId);
  return store.queue.run(async () => {
    const source = await store.readForWrite(fromDoc);
    const target = fromDoc === toDoc ? source : await store.readForWrite(toDoc);
    const at = mustLocate(source, input.id);
    checkExpected(at.block, input.expectedUpdated);
    if (subtreeIds(at.block).has(targetId)) throw invalid('A block cannot be moved under itself or its own descendant', { field: input.parentId ? 'parentId' : 'previousId' });
    at.parent!.children!.splice(at.index, 1);
    const anchor = mustLocate(target, targetId);
    const parent = input.parentId !== undefined ? anchor.block : anchor.parent;
    if (!parent?.children) throw invalid(`Block '${targetId}' cannot take the moved block here`, { field: input.parentId ? 'parentId' : 'previousId' });
    const by = updatedBy(call);
    const now = new Date();
    // A paragraph moved into a list goes in a new item of it, an item moved out of its list into a new list.
    const holder = holderFor(parent, at.block, at.parent, by, now);
    const placed = holder ?? at.block;
    assertDepthFits(input.parentId !== undefined ? anchor.ancestors.length : anchor.ancestors.length - 1, [placed], input.parentId !== undefined ? 'parentId' : 'previousId');
    assertCanContain(parent, [placed]);
    parent.children.splice(input.parentId !== undefined ? 0 : anchor.index + 1, 0, placed);
    // The list its last item left goes (after the insert: it may have been the anchor).
    const dropped = dropIfEmptyList(at.parent, at.ancestors.at(-2));
    touch(at.block, by, now);
    touchContainers([...(dropped ? at.ancestors.slice(0, -1) : at.ancestors), ...(input.parentId !== undefined ? [...anchor.ancestors, anchor.block] : anchor.ancestors)]
      .filter((block) => block !== dropped), by, now);
    touch(source, by, now);
    if (target !== source) touch(target, by, now);
    if (target === source) await store.write(source, store.entry(fromDoc));
    else await store.writeTogether([{ root: target, entry: store.entry(toDoc) }, { root: source, entry: store.entry(fromDoc) }]);
    return {
      id: input.id, documentId: toDoc, parentId: holder?.id ?? parent.id,
      ...(holder ? { wrappedIn: { id: holder.id, type: holder.type } } : {}),
      ...(dropped ? { removedEmptyList: dropped.id } : {}),
    };
  }, call);
}

export function describe(rt: BlocksRuntime, docId: string, block: Block, parentId: string | null) {
  const entry = rt.store.entry(docId);
  const markdown = block.type === 'document' ? blocksToMarkdown(block.children ?? []) : blocksToMarkdown([block]);
  return { block, documentId: docId, parentId, notebook: entry.notebook, hpath: rt.store.catalog.hpath(docId), markdown };
}

export function summary(block: Block) {
  const text = block.content ?? '';
  return {
    id: block.id, type: block.type, subtype: block.subtype ?? null,
    // Cut between whole characters: an emoji cut in half made a string no UTF-8 encoder takes.
    preview: text.length > 200 ? `${text.slice(0, wholeCharacterEnd(text, 200))}…` : text,
    childCount: block.children?.length ?? 0, updated: block.attrs.updated ?? null,
  };
}
