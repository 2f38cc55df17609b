import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/plugin-api.js';
import { ModelWireServer } from '../../../fakes/model-wire-server.js';
import { gardenCorpus, useHybrid, type HybridAnswer } from './hybrid-harness.js';

const { boot } = useHybrid();
const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };

describe('the gate on hybrid search', () => {
  it('asks the person before an agent\'s hybrid search goes through a remote reranker, unless granted; the person\'s runs', async () => {
    const { kernel, act, fake } = await boot({ remoteReranker: 'cohere' });
    await gardenCorpus(act);
    expect(kernel.registry.get('search_hybrid')?.effects).toEqual(['dataEgress', 'externalCost']);
    const asked = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent });
    expect(asked.status === 'confirmation_required' && asked.confirmation.effects).toEqual(['dataEgress', 'externalCost']);
    expect(fake!.requests).toEqual([]);
    await kernel.grants.add({ plugin: 'search-fulltext', tool: 'search', action: 'hybrid', effects: ['dataEgress', 'externalCost'], createdBy: 'alice' });
    const granted = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent });
    expect(granted.status === 'ok' && (granted.value as HybridAnswer).arms.rerank.ran).toBe(true);
    expect(fake!.requests).toHaveLength(1);
    expect((await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' })).arms.rerank.ran).toBe(true);
  });

  it('asks the person before an agent\'s hybrid search embeds its query with a remote embedder', async () => {
    const embeddings = await ModelWireServer.start([]);
    try {
      const { kernel, act } = await boot({ semantic: { embedder: 'providers' }, plugins: { providers: { config: { embedder: { provider: 'openai', model: 'embed-test', baseURL: `${embeddings.url}/v1`, apiKeyEnv: false } } } } });
      await gardenCorpus(act);
      expect(kernel.registry.get('search_hybrid')?.effects).toEqual(['dataEgress', 'externalCost']);
      const asked = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent });
      expect(asked.status).toBe('confirmation_required');
      expect(embeddings.posts).toEqual([]);
      embeddings.reply({ kind: 'json', status: 200, body: { object: 'list', model: 'embed-test', data: [{ object: 'embedding', index: 0, embedding: [1, 0] }] } });
      const ran = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent, sessionMode: 'auto' });
      expect(ran.status === 'ok' && (ran.value as HybridAnswer).arms.semantic.ran).toBe(true);
      expect(embeddings.posts.map((request) => request.body.input)).toEqual([['tomatoes']]);
    } finally {
      await embeddings.close();
    }
  });

  it('runs an agent\'s hybrid search through local backends without asking', async () => {
    const { kernel, act } = await boot({ localReranker: true });
    await gardenCorpus(act);
    expect(kernel.registry.get('search_hybrid')?.effects).toEqual([]);
    const ran = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent });
    expect(ran.status).toBe('ok');
    const answer = ran.status === 'ok' ? ran.value as HybridAnswer : undefined;
    expect(answer?.arms.rerank).toEqual({ ran: true, candidates: 5, model: 'length-1' });
    expect(answer?.arms.semantic.ran).toBe(true);
    expect(answer?.results[0]?.arms.rerank).toEqual({ rank: 1, score: expect.any(Number) });
  });
});
