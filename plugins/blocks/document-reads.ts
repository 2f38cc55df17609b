import { wholeCharacterEnd, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, invalid } from './access.js';
import { summary } from './block-actions.js';
import { blocksToMarkdown } from './markdown-out.js';
import { countBlocks } from './tree-ops.js';

/** The document tool's reads. */
export function documentReads(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  const visible = (call: ActionCall, id: string): void => assertDocumentVisible(store, call, id);
  return {
    get: async (input, call) => {
      const { id } = input as { id: string };
      visible(call, id);
      const entry = store.entry(id);
      return { document: await store.read(id), notebook: entry.notebook, parentId: entry.parent, hpath: store.catalog.hpath(id) };
    },
    get_markdown: async (input, call) => {
      const { id, offset = 0, limit } = input as { id: string; offset?: number; limit?: number };
      visible(call, id);
      const root = await store.read(id);
      const whole = blocksToMarkdown(root.children ?? []);
      if (offset > whole.length) throw invalid(`offset ${offset} is past the end of the document's Markdown (${whole.length} characters)`, { field: 'offset' });
      // A large document read a part at a time: an MCP client sees 100,000 characters of an answer at most.
      const part = partOf(whole, offset, limit);
      return { id, title: root.content ?? '', hpath: store.catalog.hpath(id), markdown: part.text, offset, total: whole.length, next: part.next };
    },
    list: (input, call) => {
      const { notebook, parentId } = input as { notebook: string; parentId?: string };
      assertNotebookVisible(store, call, notebook);
      if (parentId !== undefined) visible(call, parentId);
      if (parentId !== undefined && store.entry(parentId).notebook !== notebook) throw invalid(`Document '${parentId}' is not in notebook '${notebook}'`, { field: 'parentId' });
      const documents = store.catalog.children(notebook, parentId ?? null).map((doc) => ({
        id: doc.id, title: doc.title, hpath: store.catalog.hpath(doc.id),
        childDocuments: store.catalog.children(notebook, doc.id).length,
        updated: store.index.updatedOf(doc.id),
      }));
      return { notebook, parentId: parentId ?? null, documents };
    },
    info: async (input, call) => {
      const { id } = input as { id: string };
      visible(call, id);
      const root = await store.read(id);
      const entry = store.entry(id);
      return {
        id, title: root.content ?? '', notebook: entry.notebook, parentId: entry.parent,
        path: store.catalog.relativePath(id), hpath: store.catalog.hpath(id),
        created: root.attrs.created ?? null, updated: root.attrs.updated ?? null, updatedBy: root.attrs.updatedBy ?? null,
        blockCount: countBlocks(root), childDocuments: store.catalog.children(entry.notebook, id).map((doc) => doc.id),
        attrs: root.attrs, outline: (root.children ?? []).filter((block) => block.type === 'heading').map(summary),
      };
    },
  };
}

/**
 * `limit` characters of `text` from `offset` (all the rest without a limit), ending at a line end in
 * the last tenth of the part where there is one, and never between the two halves of a surrogate pair.
 */
export function partOf(text: string, offset: number, limit: number | undefined): { text: string; next: number | null } {
  if (limit === undefined || offset + limit >= text.length) return { text: text.slice(offset), next: null };
  let end = offset + limit;
  const lineEnd = text.lastIndexOf('\n', end - 1);
  if (lineEnd >= end - Math.floor(limit / 10)) end = lineEnd + 1;
  else end = wholeCharacterEnd(text, end);
  return { text: text.slice(offset, end), next: end };
}
