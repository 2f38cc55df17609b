import type { ActionCall } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';
import type { SearchRerank } from './tokens.js';
import { localOnlyAmong } from '../../core/index.js';

export interface RerankInput {
  query: string;
  ids: string[];
}

interface BlockRow { id: string; notebook: string; content: string }

/**
 * `rerank.rerank`: orders the given blocks by the selected reranker, for people and MCP clients. Blocks
 * the caller may not see (a reader: unpublished notebooks; the agent: notebooks a deny rule hides) are
 * treated as blocks that do not exist: listed under `missing`, never read, never sent.
 */
export async function rerankBlocks(service: SearchRerank, index: BlocksIndex, input: RerankInput, call: ActionCall) {
  await index.ready();
  const rows = new Map((index.reader.prepare('SELECT id, notebook, content FROM blocks WHERE id IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify(input.ids)) as BlockRow[]).map((row) => [row.id, row]));
  const localOnly = localOnlyAmong(index.notebooks());
  const visible = input.ids.flatMap((id) => {
    const row = rows.get(id);
    return row && index.visibleTo(call, row.notebook) ? [row] : [];
  });
  const missing = input.ids.filter((id) => !visible.some((row) => row.id === id));
  const answer = await service.rerank(input.query, visible.map((row) => ({ id: row.id, text: row.content, ...(localOnly.has(row.notebook) ? { localOnly: true } : {}) })), call.signal, call);
  return {
    query: input.query,
    reranked: answer.reranked,
    ...(answer.note ? { note: answer.note } : {}),
    ...(answer.model ? { model: answer.model } : {}),
    results: answer.order.map((entry, position) => ({ id: entry.id, rank: position + 1, ...(entry.score === undefined ? {} : { score: entry.score }) })),
    missing,
  };
}
