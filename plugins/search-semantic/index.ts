import { KernelError, WORKSPACE, definePlugin, escapeHtml, type ActionCall } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { CONFIG_FIELD, type SemanticConfig } from './config.js';
import { SemanticService } from './semantic-service.js';
import { SEMANTIC_SEARCH, type SearchFilters, type SemanticSearch } from './tokens.js';
import { reportingNotes } from '../blocks/report-notes.js';

interface SemanticInput extends SearchFilters {
  query: string;
  page?: number;
  pageSize?: number;
}

const SNIPPET_CHARS = 240;

export default definePlugin<SemanticConfig>({
  activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const blocks = ctx.get(BLOCKS_INDEX);
    // Without an embedder in quire.json the plugin is present and does nothing (no store, no indexer).
    const handle = ctx.config.embedder !== undefined ? ctx.selectBackend('embedder', ctx.config.embedder, CONFIG_FIELD) : undefined;
    const service = new SemanticService({ blocks, indexDir: workspace.indexDir, config: ctx.config, handle, log: ctx.log });
    ctx.onDispose(() => service.close());
    const capability: SemanticSearch = {
      unavailable: (caller) => service.unavailable(caller),
      async search(query, call) {
        const { answer, blocks: found } = await service.searchBlocks(query, call);
        const hits = answer.hits.flatMap((hit, i) => {
          const block = found.get(hit.key);
          return block ? [{ id: block.id, score: hit.score, rank: answer.offset + i + 1 }] : [];
        });
        return { hits, complete: answer.complete, ...(answer.note ? { note: answer.note } : {}), model: answer.model, exact: answer.exact };
      },
    };
    ctx.provide(SEMANTIC_SEARCH, capability);
    const enabled = () => {
      if (!handle) throw new KernelError('MODEL_UNAVAILABLE', `Semantic search is off: ${service.unavailable() ?? ''}`, { details: { field: CONFIG_FIELD } });
    };
    return {
      search: reportingNotes(blocks, {
        semantic: async (input, call: ActionCall) => {
          const { query, notebooks, path, types, subtypes, page = 1, pageSize = 20 } = input as unknown as SemanticInput;
          const { answer, blocks: found } = await service.searchBlocks({
            query, limit: pageSize, offset: (page - 1) * pageSize,
            ...(notebooks ? { notebooks } : {}), ...(path !== undefined ? { path } : {}), ...(types ? { types } : {}), ...(subtypes ? { subtypes } : {}),
          }, call);
          const results = answer.hits.flatMap((hit, i) => {
            const block = found.get(hit.key);
            if (!block) return [];
            const rank = answer.offset + i + 1;
            const score = Math.round(hit.score * 1e6) / 1e6;
            return [{
              id: block.id, documentId: block.root_id, notebook: block.notebook, hpath: block.hpath, type: block.type, subtype: block.subtype,
              snippet: snippetOf(block.content), score, rank, arms: { semantic: { rank, score } },
            }];
          });
          return { query, page, pageSize, model: answer.model, complete: answer.complete, ...(answer.note ? { note: answer.note } : {}), exact: answer.exact, results };
        },
      }),
      embeddings: {
        status: (_input, call) => service.status(call),
        reindex: async (_input, call) => { enabled(); await service.reindex(); return service.status(call); },
        retry_failed: async (_input, call) => { enabled(); const retried = await service.retryFailed(); return { retried, ...(await service.status(call)) }; },
        index: async (input, call) => {
          enabled();
          const { reindex, retryFailed } = input as { reindex?: boolean; retryFailed?: boolean };
          if (service.unavailable()) throw new KernelError('MODEL_UNAVAILABLE', `Semantic search is off: ${service.unavailable() ?? ''}`, { details: { field: CONFIG_FIELD } });
          if (reindex) await service.reindex();
          if (retryFailed) await service.retryFailed();
          const outcome = await service.drain(call);
          // Said as import and export say it: the job that ran it ends cancelled or timed_out, not succeeded.
          // Stopped by the indexer closing (the kernel stopping), not the call: a cancel, as the kernel's close is one.
          return { outcome, ...(outcome === 'stopped' ? { stopped: call.stopped ?? 'cancelled' } : {}), ...(await service.status(call)) };
        },
      },
    };
  },
});

/** The block's start, HTML-escaped as full-text snippets are (their <mark>s are the only markup a snippet holds). */
function snippetOf(content: string): string {
  const text = content.replace(/\s+/g, ' ').trim();
  const cut = text.length <= SNIPPET_CHARS ? text : `${text.slice(0, SNIPPET_CHARS - 1)}…`;
  return escapeHtml(cut);
}
