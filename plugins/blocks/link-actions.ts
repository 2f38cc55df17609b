import { KernelError, isValidId, readableNotebooks, readsAreScoped, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { NotebookConf } from './notebook-conf.js';
import type { Block } from './block-model.js';
import type { BlocksRuntime } from './runtime.js';
import { checkExpected, documentOfBlock, invalid } from './access.js';
import { ATTR_NAME, SETTABLE_ATTR } from './document-file.js';
import { mutateDocument } from './mutate.js';
import { touch, touchContainers } from './provenance.js';
import { locate } from './tree-ops.js';

/** Attributes a person or the agent may set: their own (`custom-*`) and the searchable ones. */
const RESULT_LIMIT = 200;
/** Tags listed at most; a listing with more says so (`truncated`). */
const TAGS_LISTED = 1_000;

/**
 * Keeps index queries to what the caller may see: readers, published notebooks only; the agent, none
 * that a deny rule keeps it out of. Ids are checked before they are written into the SQL.
 */
function scopeClause(call: ActionCall, notebooks: ReadonlyMap<string, NotebookConf>, alias = 'b'): string {
  if (!readsAreScoped(call)) return '';
  const readable = readableNotebooks(call, notebooks).filter((id) => isValidId(id)).map((id) => `'${id}'`);
  return readable.length > 0 ? ` AND ${alias}.notebook IN (${readable.join(', ')})` : ' AND 0';
}

const ROW_COLUMNS = 'b.id, b.type, b.subtype, b.root_id AS documentId, b.notebook, b.hpath, substr(b.content, 1, 200) AS preview, b.updated';

export function attrActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const { store } = rt;
  return {
    get: async (input, call) => {
      const { id } = input as { id: string };
      const docId = documentOfBlock(store, call, id);
      const at = locate(await store.read(docId), id);
      if (!at) throw new KernelError('NOT_FOUND', `No block with id '${id}'`, { details: { id } });
      return { id, attrs: at.block.attrs };
    },
    set: (input, call) => {
      const { id, attrs, expectedUpdated } = input as { id: string; attrs: Record<string, string | null>; expectedUpdated?: string };
      for (const name of Object.keys(attrs)) {
        if (!ATTR_NAME.test(name) || !SETTABLE_ATTR.test(name)) {
          throw invalid(`Attribute '${name}' cannot be set: use custom-<name> (letters, digits, - and _), or one of name, alias, memo, bookmark`, { field: `attrs/${name}` });
        }
      }
      const docId = documentOfBlock(store, call, id);
      return mutateDocument(store, docId, call, ({ root, by, now }) => {
        const at = locate(root, id);
        if (!at) throw new KernelError('NOT_FOUND', `No block with id '${id}'`, { details: { id } });
        checkExpected(at.block, expectedUpdated);
        for (const [name, value] of Object.entries(attrs)) {
          if (value === null) delete at.block.attrs[name];
          else at.block.attrs[name] = value;
        }
        touch(at.block, by, now);
        touchContainers(at.ancestors, by, now);
        // A copy: calls written together share the block, and a later one's attributes were in this answer.
        return { id, attrs: { ...at.block.attrs } };
      });
    },
  };
}

export function refActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const db = rt.store.index.reader;
  return {
    backlinks: (input, call) => {
      const { id } = input as { id: string };
      documentOfBlock(rt.store, call, id);
      const rows = db.prepare(`SELECT ${ROW_COLUMNS}, r.anchor FROM refs r JOIN blocks b ON b.id = r.block_id
        WHERE r.def_block_id = ? ${scopeClause(call, rt.store.catalog.notebooks)} ORDER BY b.root_id, b.id LIMIT ${RESULT_LIMIT + 1}`).all(id);
      return { id, backlinks: rows.slice(0, RESULT_LIMIT), truncated: rows.length > RESULT_LIMIT };
    },
    forward: (input, call) => {
      const { id } = input as { id: string };
      documentOfBlock(rt.store, call, id);
      // A reference to a block that is gone, or that a reader may not see, shows as unresolved.
      const seen = scopeClause(call, rt.store.catalog.notebooks, 't');
      const rows = db.prepare(`SELECT r.block_id AS fromId, r.def_block_id AS id, r.anchor, t.type, t.root_id AS documentId,
          substr(t.content, 1, 200) AS preview, t.id IS NOT NULL AS resolved
        FROM refs r LEFT JOIN blocks t ON t.id = r.def_block_id ${seen}
        WHERE r.block_id = ? OR r.root_id = ? ORDER BY r.block_id, r.ordinal LIMIT ${RESULT_LIMIT + 1}`).all(id, id) as { resolved: number }[];
      // Said when there are more (the 201st and after were dropped without a word, unlike backlinks).
      return { id, refs: rows.slice(0, RESULT_LIMIT).map((row) => ({ ...row, resolved: row.resolved === 1 })), truncated: rows.length > RESULT_LIMIT };
    },
  };
}

export function tagActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  const db = rt.store.index.reader;
  return {
    list: (input, call) => {
      const { prefix } = input as { prefix?: string };
      const rows = db.prepare(`SELECT t.tag, count(*) AS blocks FROM tags t JOIN blocks b ON b.id = t.block_id
        WHERE (? IS NULL OR substr(t.tag, 1, length(?)) = ?) ${scopeClause(call, rt.store.catalog.notebooks)} GROUP BY t.tag ORDER BY t.tag LIMIT ${TAGS_LISTED + 1}`).all(prefix ?? null, prefix ?? null, prefix ?? null);
      return { tags: rows.slice(0, TAGS_LISTED), truncated: rows.length > TAGS_LISTED };
    },
    blocks: (input, call) => {
      const { tag, limit } = input as { tag: string; limit?: number };
      const cap = limit ?? 50;
      const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM tags t JOIN blocks b ON b.id = t.block_id
        WHERE (t.tag = ? OR substr(t.tag, 1, length(?) + 1) = ? || '/') ${scopeClause(call, rt.store.catalog.notebooks)} ORDER BY b.updated DESC, b.id LIMIT ?`).all(tag, tag, tag, cap + 1);
      return { tag, blocks: rows.slice(0, cap), truncated: rows.length > cap };
    },
  };
}

interface OutlineItem { id: string; level: number; text: string; children: OutlineItem[] }

export function outlineActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  return {
    get: async (input, call) => {
      const { id } = input as { id: string };
      const docId = documentOfBlock(rt.store, call, id);
      return { id: docId, outline: outline(await rt.store.read(docId)) };
    },
  };
}

/** Headings of a document nested by level, wherever they sit in the tree (quotes and callouts too). */
function outline(root: Block): OutlineItem[] {
  const top: OutlineItem[] = [];
  const open: OutlineItem[] = [];
  const visit = (block: Block): void => {
    if (block.type === 'heading') {
      const item: OutlineItem = { id: block.id, level: Number(block.subtype?.slice(1)) || 1, text: block.content ?? '', children: [] };
      while (open.length > 0 && open[open.length - 1]!.level >= item.level) open.pop();
      (open.length > 0 ? open[open.length - 1]!.children : top).push(item);
      open.push(item);
    }
    for (const child of block.children ?? []) visit(child);
  };
  visit(root);
  return top;
}
