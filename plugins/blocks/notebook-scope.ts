import { isValidId, type NotebookScope } from '../../core/index.js';
import type { BlockIndex } from './block-index.js';

/** Input fields that name a notebook, document or block, in any plugin's actions. */
const ID_FIELDS = ['id', 'parentId', 'previousId', 'nextId'] as const;
const MAX_IDS = 100;

/**
 * Maps the ids a call names to their notebooks for the gate. It reads the index (not the in-memory
 * catalog), so it answers from the first call on, even while the start-up sync is still running.
 */
export function createNotebookScope(index: BlockIndex): NotebookScope {
  const notebookOfBlock = index.db.prepare('SELECT notebook FROM blocks WHERE id = ?').pluck();
  const isNotebook = index.db.prepare('SELECT 1 FROM notebooks WHERE id = ?').pluck();
  return {
    notebooksOf({ input }) {
      const ids: unknown[] = ID_FIELDS.map((field) => input[field]);
      if (Array.isArray(input.ids)) ids.push(...input.ids.slice(0, MAX_IDS));
      const found = new Set<string>();
      for (const id of ids) {
        if (!isValidId(id)) continue;
        if (isNotebook.get(id) !== undefined) found.add(id);
        const notebook = notebookOfBlock.get(id) as string | undefined;
        if (notebook !== undefined) found.add(notebook);
      }
      return [...found];
    },
  };
}
