import { KernelError, isValidId, type AgentLimit, type NotebookScope } from '../../core/index.js';
import type { BlockStore } from './block-store.js';

/** Input fields that name a notebook, document or block, in any plugin's actions. */
const ID_FIELDS = ['id', 'parentId', 'previousId', 'nextId'] as const;
const MAX_IDS = 100;

/**
 * Maps the ids a call names to their notebooks for the gate: notebooks and documents from the catalog
 * (which knows documents whose file does not parse), blocks from the index. While the index is being
 * built an unknown id may be a block not indexed yet, so the gate is told to wait rather than guess:
 * guessing "no notebook" would let a call slip past a notebook's deny rule.
 */
export function createNotebookScope(store: BlockStore, isSyncing: () => boolean): NotebookScope {
  const notebookOfBlock = store.index.reader.prepare('SELECT notebook FROM blocks WHERE id = ?').pluck();
  return {
    notebooksOf({ input }) {
      const ids: unknown[] = ID_FIELDS.map((field) => input[field]);
      if (Array.isArray(input.ids)) ids.push(...input.ids.slice(0, MAX_IDS));
      // A search's notebook filter names notebooks too.
      if (Array.isArray(input.notebooks)) ids.push(...input.notebooks.slice(0, MAX_IDS));
      if (typeof input.path === 'string') ids.push(...input.path.split('/').slice(0, MAX_IDS));
      const found = new Set<string>();
      for (const id of ids) {
        if (!isValidId(id)) continue;
        const notebook = store.catalog.notebooks.has(id) ? id : store.catalog.doc(id)?.notebook ?? notebookOfBlock.get(id) as string | undefined;
        if (notebook !== undefined) found.add(notebook);
        else if (isSyncing()) throw new KernelError('NOT_READY', 'The notes index is being built; try again in a moment', { details: { id, retryAfterSeconds: 2 } });
      }
      return [...found];
    },
    // An export writes notes to a folder outside the workspace, where anything (an import into another notebook) may take them.
    leavesWorkspace: ({ plugin, tool }) => plugin === 'blocks' && tool === 'export',
    agentLimits() {
      const limits = new Map<string, AgentLimit>();
      for (const [id, conf] of store.catalog.notebooks) if (conf.agent !== undefined) limits.set(id, conf.agent);
      return limits;
    },
    onChanged(listener) {
      const places = store.index.reader.prepare('SELECT id, root_id, notebook FROM blocks WHERE id IN (SELECT value FROM json_each(?))');
      return store.index.onIndexed((change) => {
        const ids = new Set<string>([...change.upserted, ...change.documents]);
        const notebooks = new Set<string>(change.notebooks);
        for (let start = 0; start < change.upserted.length; start += 500) {
          const rows = places.all(JSON.stringify(change.upserted.slice(start, start + 500))) as { id: string; root_id: string; notebook: string }[];
          for (const row of rows) { ids.add(row.root_id); notebooks.add(row.notebook); }
        }
        for (const doc of change.documents) { const notebook = store.catalog.doc(doc)?.notebook; if (notebook) notebooks.add(notebook); }
        // A removed block's document is not known any more: every subscriber looks again.
        listener({ ids, notebooks, all: change.rebuilt || change.removed.length > 0, rebuilt: change.rebuilt });
      });
    },
    privacy() {
      return [...store.catalog.notebooks].map(([id, conf]) => ({ id, name: conf.name, agent: conf.agent ?? 'write', egress: conf.egress ?? 'allowed' }));
    },
  };
}
