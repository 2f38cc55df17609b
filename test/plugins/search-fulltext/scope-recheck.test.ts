import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ActionCall } from '../../../core/plugin-api.js';
import { openIndexReader } from '../../../plugins/blocks/index-schema.js';
import { searchText } from '../../../plugins/blocks/search-text.js';
import type { BlocksIndex } from '../../../plugins/blocks/tokens.js';
import { createFulltextSearch } from '../../../plugins/search-fulltext/fulltext-search.js';
import { reader, useBlocks } from '../blocks/blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
type Access = 'private' | 'published';

/**
 * A query runs on a worker while the main thread goes on: a notebook may be closed to the caller (and
 * written to) between the scope it was given and its answer. The scope is asked again after the answer,
 * and a query whose scope narrowed meanwhile is asked again within the new one. Here the notebooks'
 * access changes between the first two times it is asked, over a real index, on the main thread's
 * reader (`queryWorkers: 0`: the same check runs whichever thread answers).
 */
describe('full-text search: the caller\'s scope checked again after the answer', () => {
  it('asks again when a notebook was closed to the caller while the query ran, and returns nothing of it', async () => {
    const { kernel, act } = await boot();
    const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
    const closing = await act<Created>('notebook_create', { name: 'Closing', access: 'published' });
    await act('document_create', { notebook: open.id, title: 'A', markdown: 'kiwi orchards in the valley' });
    await act('document_create', { notebook: closing.id, title: 'B', markdown: 'kiwi prices, soon private' });
    const workspace = kernel.workspace.root;
    await kernel.close();

    const accessSeen: Access[] = [];
    let asked = 0;
    const db = openIndexReader(join(workspace, 'index', 'quire.db'));
    try {
      const index = {
        file: join(workspace, 'index', 'quire.db'),
        reader: db,
        searchText,
        ready: async () => undefined,
        // The first answer is asked with both notebooks published; from then on, `closing` is private.
        notebooks: () => {
          const access: Access = asked++ === 0 ? 'published' : 'private';
          accessSeen.push(access);
          return new Map([[open.id, { name: 'Open', access: 'published' as Access }], [closing.id, { name: 'Closing', access }]]);
        },
      } as unknown as BlocksIndex;
      const search = createFulltextSearch(index, { queryWorkers: 0 });
      const call = { principal: reader, deniedNotebooks: new Set<string>(), signal: new AbortController().signal } as unknown as ActionCall;
      const found = await search({ query: 'kiwi' }, call);
      expect(found.results.map((hit) => hit.notebook)).toEqual([open.id]);
      expect(found.total).toBe(1);
      // Asked for the scope three times: before the query, after its first answer, after the second.
      expect(accessSeen).toEqual(['published', 'private', 'private']);
      await search.close();
    } finally {
      db.close();
    }
  });
});
