import { definePlugin } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { SEARCH_RERANK } from '../rerank/tokens.js';
import { SEMANTIC_SEARCH } from '../search-semantic/tokens.js';
import { createFulltextSearch, type FulltextInput, type SearchOptions } from './fulltext-search.js';
import { createHybridSearch, type HybridInput } from './hybrid-search.js';
import { reportingNotes } from '../blocks/report-notes.js';

export default definePlugin<SearchOptions>({
  activate(ctx) {
    const index = ctx.get(BLOCKS_INDEX);
    const search = createFulltextSearch(index, ctx.config);
    ctx.onDispose(() => search.close());
    // search.semantic and search.rerank are looked up at each call: either plugin may be disabled, or activate after this one.
    const hybrid = createHybridSearch({ index, fulltext: search, semantic: () => ctx.find(SEMANTIC_SEARCH), rerank: () => ctx.find(SEARCH_RERANK) });
    return { search: reportingNotes(index, {
      fulltext: (input, call) => search(input as unknown as FulltextInput, call),
      hybrid: (input, call) => hybrid(input as unknown as HybridInput, call),
    }) };
  },
});
