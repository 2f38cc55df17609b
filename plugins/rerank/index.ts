import { definePlugin } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { rerankBlocks, type RerankInput } from './rerank-action.js';
import { createSearchRerank, type RerankConfig } from './search-rerank.js';
import { SEARCH_RERANK } from './tokens.js';
import { reportingNotes } from '../blocks/report-notes.js';

export default definePlugin<RerankConfig>({
  activate(ctx) {
    const handle = ctx.config.reranker === undefined ? undefined : ctx.selectBackend('reranker', ctx.config.reranker, 'plugins.rerank.config.reranker');
    const service = createSearchRerank(handle, ctx.config, ctx.log);
    ctx.provide(SEARCH_RERANK, service);
    const index = ctx.get(BLOCKS_INDEX);
    return { rerank: reportingNotes(index, { rerank: (input, call) => rerankBlocks(service, index, input as unknown as RerankInput, call) }) };
  },
});
