import { definePlugin } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { createFulltextSearch, type FulltextInput, type SearchOptions } from './fulltext-search.js';

export default definePlugin<SearchOptions>({
  activate(ctx) {
    const search = createFulltextSearch(ctx.get(BLOCKS_INDEX), ctx.config);
    return { search: { fulltext: (input, call) => search(input as unknown as FulltextInput, call) } };
  },
});
