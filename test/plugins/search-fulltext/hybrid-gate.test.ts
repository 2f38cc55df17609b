import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../../../core/http/serve.js';
import type { Principal } from '../../../core/plugin-api.js';
import { ModelWireServer } from '../../../fakes/model-wire-server.js';
import { ADMIN_TOKEN, gardenCorpus, reader, useHybrid, type HybridAnswer } from './hybrid-harness.js';
import { connectMcp } from '../../helpers/mcp-client.js';

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

  it('lets a reader search with hybrid and rerank, without the remote reranker: nothing of a reader\'s call leaves the machine', async () => {
    const { kernel, fake } = await boot({ remoteReranker: 'cohere' });
    const { garden } = await gardenCorpus(async (target, input) => {
      const outcome = await kernel.pipeline.call({ target, input, principal: { kind: 'person', name: 'alice', role: 'admin' } });
      return (outcome.status === 'ok' ? outcome.value : undefined) as never;
    });
    const searched = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: reader });
    const answer = (searched.status === 'ok' ? searched.value : undefined) as HybridAnswer;
    expect(answer.arms.rerank.ran).toBe(false);
    expect(answer.arms.rerank.reason).toContain("a reader's call does not use the reranker providers/http, which has effects (dataEgress, externalCost)");
    expect(answer.results.length).toBeGreaterThan(0);
    expect(answer.results.every((hit) => hit.notebook === garden)).toBe(true);
    const ids = answer.results.map((hit) => hit.id);
    const reranked = await kernel.pipeline.call({ target: 'rerank_rerank', input: { query: 'tomatoes', ids }, principal: reader });
    expect(reranked.status === 'ok' && (reranked.value as { reranked: boolean }).reranked).toBe(false);
    expect(fake!.requests).toEqual([]);
    // The administrator's same search is reranked.
    const asAdmin = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: { kind: 'person', name: 'alice', role: 'admin' } });
    expect(asAdmin.status === 'ok' && (asAdmin.value as HybridAnswer).arms.rerank.ran).toBe(true);
    expect(fake!.requests).toHaveLength(1);
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

  it('is offered over MCP with its annotations, and the rerank tool is gone when rerank is disabled', async () => {
    for (const [options, rerankListed] of [[{ localReranker: true }, true], [{ plugins: { rerank: { enabled: false } } }, false]] as const) {
      const { kernel, act } = await boot(options);
      await gardenCorpus(act);
      const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
      const client = await connectMcp(server.url, ADMIN_TOKEN);
      try {
        const { tools } = await client.listTools();
        const hybrid = tools.find((tool) => tool.name === 'search_hybrid');
        expect(hybrid?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
        expect(tools.some((tool) => tool.name === 'rerank_rerank')).toBe(rerankListed);
        const called = await client.callTool({ name: 'search_hybrid', arguments: { query: 'tomatoes' } });
        const answer = (called.structuredContent ?? JSON.parse((called.content as { text: string }[])[0]!.text)) as HybridAnswer;
        expect(answer.arms.rerank.ran).toBe(rerankListed);
        expect(answer.results.length).toBeGreaterThan(0);
      } finally {
        await client.close();
        await server.close();
      }
    }
  });
});
