import { newId, wholeCharacterEnd, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { Block, DraftBlock } from './block-model.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, checkExpected, invalid } from './access.js';
import { documentReads } from './document-reads.js';
import { moveDocument, removeDocument } from './document-moves.js';
import { checkDisplayName } from './notebook-conf.js';
import { stampNew, touch, updatedBy } from './provenance.js';
import { countBlocks, materialise } from './tree-ops.js';

interface CreateInput { notebook: string; title: string; markdown?: string; parentId?: string }

/** The document tool. */
export function documentActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  return {
    ...documentReads(rt),
    create: async (input, call) => {
      const { notebook, title, markdown, parentId } = input as unknown as CreateInput;
      return createDocument(rt, call, { notebook, title, parentId, drafts: markdown !== undefined ? await rt.parseMarkdown(markdown, call) : [] });
    },
    rename: (input, call) => renameDocument(rt, call, input as { id: string; title: string; expectedUpdated?: string }),
    move: (input, call) => moveDocument(rt, call, input as { id: string; notebook: string; parentId?: string; expectedUpdated?: string }),
    duplicate: async (input, call) => {
      const { id } = input as { id: string };
      assertDocumentVisible(store, call, id);
      const entry = store.entry(id);
      const original = await store.read(id);
      const copy = freshIds(original.children ?? []);
      // The copy's title within a title's 512 characters (a long one's copy was refused, naming a title
      // the caller never sent); not a daily note (its marker copied made the copy that day's note once
      // the original went).
      const title = `${firstUtf16Units(original.content ?? '', 512 - ' (copy)'.length)} (copy)`;
      const attrs = Object.fromEntries(Object.entries(customAttrs(original)).filter(([name]) => !name.startsWith('custom-dailynote-')));
      return createDocument(rt, call, { notebook: entry.notebook, parentId: entry.parent ?? undefined, title, drafts: copy, attrs });
    },
    remove: (input, call) => removeDocument(rt, call, input as { id: string; expectedUpdated?: string }),
  };
}

function renameDocument(rt: BlocksRuntime, call: ActionCall, input: { id: string; title: string; expectedUpdated?: string }) {
  const { store } = rt;
  const { id, title, expectedUpdated } = input;
  assertDocumentVisible(store, call, id);
  const problem = checkDisplayName(title, 'title');
  if (problem) throw invalid(problem, { field: 'title' });
  return store.queue.run(async () => {
    const root = await store.readForWrite(id);
    checkExpected(root, expectedUpdated);
    root.content = title;
    touch(root, updatedBy(call), new Date());
    await store.write(root, store.entry(id));
    // Every document below now has another hpath.
    store.replaceSubtree(store.catalog.subtree(id).slice(1).map((entry) => entry.id));
    return { id, title, updated: root.attrs.updated };
  }, call);
}

interface NewDocument {
  notebook: string;
  title: string;
  parentId?: string | undefined;
  drafts: DraftBlock[];
  attrs?: Record<string, string>;
}

/** Creates a document file (and its index rows); shared with import and daily notes. */
export function createDocument(rt: BlocksRuntime, call: Pick<ActionCall, 'principal' | 'callId'>, doc: NewDocument) {
  const { store } = rt;
  const problem = checkDisplayName(doc.title, 'title');
  if (problem) throw invalid(problem, { field: 'title' });
  assertNotebookVisible(store, call, doc.notebook);
  if (doc.parentId !== undefined) {
    assertDocumentVisible(store, call, doc.parentId);
    if (store.entry(doc.parentId).notebook !== doc.notebook) throw invalid(`The parent document '${doc.parentId}' is in another notebook`, { field: 'parentId' });
  }
  return store.queue.run(() => createDocumentNow(rt, call, doc), 'stopped' in call ? call as Pick<ActionCall, 'stopped'> : undefined);
}

/** Creates the document; for a caller already inside the write queue (store.write checks the place again). */
export async function createDocumentNow(rt: BlocksRuntime, call: Pick<ActionCall, 'principal' | 'callId'>, doc: NewDocument) {
  const { store } = rt;
  const by = updatedBy(call);
  const now = new Date();
  const root: Block = { id: newId(now), type: 'document', content: doc.title, attrs: { ...(doc.attrs ?? {}) }, children: [] };
  stampNew(root, by, now);
  root.children = materialise(doc.drafts.length > 0 ? doc.drafts : [{ type: 'paragraph', content: '' }], by, now);
  await store.write(root, { id: root.id, notebook: doc.notebook, parent: doc.parentId ?? null, title: doc.title });
  return { id: root.id, notebook: doc.notebook, parentId: doc.parentId ?? null, hpath: store.catalog.hpath(root.id), blockCount: countBlocks(root) };
}

function freshIds(blocks: readonly Block[]): DraftBlock[] {
  return blocks.map((block) => {
    const draft: DraftBlock = { ...block, id: undefined, attrs: customAttrs(block), children: undefined };
    if (block.children) draft.children = freshIds(block.children);
    else delete draft.children;
    delete draft.id;
    return draft;
  });
}

function customAttrs(block: Block): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(block.attrs)) if (name.startsWith('custom-')) out[name] = value;
  return out;
}

/** At most `limit` UTF-16 units of `text` (a title's limit is in them), never half a surrogate pair. */
function firstUtf16Units(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return text.slice(0, wholeCharacterEnd(text, limit));
}
