import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from '../../../plugins/search-fulltext/rank-fusion.js';
import { caught } from '../../helpers/harness.js';
import { gardenCorpus, reader, text, useHybrid, READER_TOKEN, type HybridAnswer } from './hybrid-harness.js';

const { boot } = useHybrid();

describe('reciprocal rank fusion', () => {
  it('adds 1/(60 + rank) per list, puts blocks both lists found first, and breaks ties the same way every time', () => {
    const fused = reciprocalRankFusion({
      fulltext: [{ id: 'a', rank: 1, score: 9 }, { id: 'b', rank: 2, score: 5 }, { id: 'c', rank: 3, score: 1 }],
      semantic: [{ id: 'd', rank: 1, score: 0.9 }, { id: 'c', rank: 2, score: 0.8 }],
    });
    expect(fused.map((item) => item.id)).toEqual(['c', 'a', 'd', 'b']);
    expect(fused[0]).toEqual({ id: 'c', score: 1 / 63 + 1 / 62, arms: { fulltext: { rank: 3, score: 1 }, semantic: { rank: 2, score: 0.8 } } });
    // a and d tie (1/61 each): the first arm's wins.
    expect(fused[1]!.score).toBe(fused[2]!.score);
    expect(reciprocalRankFusion({ fulltext: [] })).toEqual([]);
  });
});

describe('hybrid search', () => {
  it('fuses full text and semantic results, and says which arms found each', async () => {
    const { act } = await boot();
    await gardenCorpus(act);
    const found = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
    expect(found.fellBackToFulltext).toBe(false);
    expect(found.arms.semantic).toMatchObject({ ran: true, model: 'topics-3' });
    expect(found.arms.rerank).toMatchObject({ ran: false, reason: expect.stringContaining('no reranker is configured') });
    const texts = found.results.map(text);
    // Found by both arms first; the semantic arm adds blocks without the word; no animal, whatever the depth.
    const both = found.results.filter((hit) => hit.arms.fulltext && hit.arms.semantic).map(text);
    expect(both.sort()).toEqual(['Basil grows well beside tomatoes.', 'Planting tomatoes', 'Secret tomatoes plans for the garden.', 'Tomatoes need warm soil and full sun.']);
    expect(texts.slice(0, 4).sort()).toEqual(both);
    expect(found.results.find((hit) => text(hit) === 'Vegetables want a sunny garden bed.')?.arms).toEqual({ semantic: { rank: expect.any(Number), score: 1 } });
    expect(texts).toContain('Tomato soup recipe for cold days.');
    expect(texts).not.toContain('The quick brown fox jumps over the lazy dog.');
    expect(found.results.map((hit) => hit.rank)).toEqual(found.results.map((_, i) => i + 1));
    expect(found.results.find((hit) => text(hit) === 'Planting tomatoes')!.snippet).toBe('Planting <mark>tomatoes</mark>');
    // The filters reach both arms.
    const queries = (globalThis as { __fakeSemanticQueries?: unknown[] }).__fakeSemanticQueries!;
    const { garden } = await gardenCorpus(act);
    await act('search_hybrid', { query: 'tomatoes', notebooks: [garden], types: ['paragraph'] });
    expect(queries.at(-1)).toMatchObject({ query: 'tomatoes', notebooks: [garden], types: ['paragraph'], offset: 0 });
  });

  it('pages through the fused list', async () => {
    const { act } = await boot();
    await gardenCorpus(act);
    const all = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes', pageSize: 100 });
    const first = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes', pageSize: 3 });
    const second = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes', pageSize: 3, page: 2 });
    expect([...first.results, ...second.results].map((hit) => hit.id)).toEqual(all.results.slice(0, 6).map((hit) => hit.id));
    expect(second.results.map((hit) => hit.rank)).toEqual([4, 5, 6]);
    expect(first.total).toBe(all.results.length);
  });

  it('holds a reader to published notebooks in every arm, even when the semantic arm would leak', async () => {
    for (const semantic of [{}, { leaky: true }]) {
      const { act } = await boot({ semantic });
      const { secret } = await gardenCorpus(act);
      const asAdmin = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
      expect(asAdmin.results.map((hit) => hit.notebook)).toContain(secret);
      const asReader = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes garden' }, reader);
      expect(asReader.results.length).toBeGreaterThan(0);
      expect(asReader.results.filter((hit) => hit.notebook === secret || text(hit).includes('Secret'))).toEqual([]);
      const asked = await act<HybridAnswer>('search_hybrid', { query: 'secret', notebooks: [secret] }, reader);
      expect([semantic, asked.results]).toEqual([semantic, []]);
    }
  });

  it('says why the semantic arm did not run and answers from full text: no embedder, a failure, incomplete vectors', async () => {
    const cases: [Record<string, unknown>, string, boolean][] = [
      [{ off: true }, 'semantic search has no embedder (plugins.fake-semantic.config.embedder)', true],
      [{ fail: true }, 'semantic search failed: the embedder is unreachable', true],
      [{ incomplete: true }, 'semantic results are incomplete: 3 blocks are being embedded', false],
    ];
    for (const [semantic, note, fellBack] of cases) {
      const { act } = await boot({ semantic });
      await gardenCorpus(act);
      const found = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
      expect([found.fellBackToFulltext, found.note]).toEqual([fellBack, expect.stringContaining(note)]);
      if (fellBack) {
        const fulltext = await act<{ results: { id: string }[] }>('search_fulltext', { query: 'tomatoes' });
        expect(found.results.map((hit) => hit.id)).toEqual(fulltext.results.map((hit) => hit.id));
        expect(found.results.every((hit) => hit.arms.fulltext && !hit.arms.semantic)).toBe(true);
      }
    }
  });

  it('reports a query full text cannot read when the semantic arm can, and refuses it when full text is all there is', async () => {
    const { act } = await boot();
    await gardenCorpus(act);
    const found = await act<HybridAnswer>('search_hybrid', { query: '-tomatoes' });
    expect(found.note).toContain('the full-text arm could not search this query');
    expect(found.arms.fulltext.ran).toBe(false);
    const { act: plain } = await boot({ semantic: { off: true } });
    expect((await caught(plain('search_hybrid', { query: '-tomatoes' }))).code).toBe('INVALID_INPUT');
  });
});

describe('hybrid search with search-semantic and rerank disabled', () => {
  it('falls back to full text and says so, and the disabled plugins\' actions are gone everywhere, over HTTP too', async () => {
    const { kernel, act, http } = await boot({ semantic: false, plugins: { 'search-semantic': { enabled: false }, rerank: { enabled: false } } });
    await gardenCorpus(act);
    expect(kernel.registry.get('search_semantic')).toBeUndefined();
    expect(kernel.registry.get('rerank_rerank')).toBeUndefined();
    expect(kernel.registry.get('search_hybrid')?.effects).toEqual([]);
    const response = await http('/api/actions/search-fulltext/search/hybrid', { query: 'tomatoes' });
    expect(response.status).toBe(200);
    const { result } = await response.json() as { result: HybridAnswer };
    expect(result.fellBackToFulltext).toBe(true);
    expect(result.arms.semantic).toEqual({ ran: false, reason: 'semantic search is disabled (the search-semantic plugin is not active)' });
    expect(result.arms.rerank).toEqual({ ran: false, reason: 'reranking is disabled (the rerank plugin is not active)' });
    expect(result.note).toBe('semantic search is disabled (the search-semantic plugin is not active); reranking is disabled (the rerank plugin is not active)');
    const fulltext = await act<{ results: { id: string }[] }>('search_fulltext', { query: 'tomatoes' });
    expect(result.results.map((hit) => hit.id)).toEqual(fulltext.results.map((hit) => hit.id));
    expect((await http('/api/actions/rerank/rerank/rerank', { query: 'x', ids: ['20240101000000-abcdefg'] })).status).toBe(404);
    expect((await http('/api/actions/search-semantic/search/semantic', { query: 'x' })).status).toBe(404);
    // A reader over HTTP sees only the published notebook.
    const { result: read } = await (await http('/api/actions/search-fulltext/search/hybrid', { query: 'tomatoes' }, READER_TOKEN)).json() as { result: HybridAnswer };
    expect(read.results.map(text)).not.toContain('Secret tomatoes plans for the garden.');
    expect(read.results.length).toBe(3);
  });
});
