import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/plugin-api.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { gardenCorpus, useHybrid, type HybridAnswer } from '../search-fulltext/hybrid-harness.js';

const { boot, tempDir } = useHybrid();
const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };

describe('rerank through the local-models cross-encoder', () => {
  it('reranks an agent\'s hybrid search on this machine, without asking the person', async () => {
    const workspace = join(await tempDir(), 'workspace');
    await generateTinyBertModel(join(workspace, 'models', 'test', 'reranker'), { kind: 'cross-encoder', seed: 4, cjk: false });
    const { kernel, act } = await boot({ workspace, plugins: {
      'local-models': { config: { reranker: { model: 'test/reranker' } } },
      rerank: { config: { reranker: 'local-models', candidates: 5 } },
    } });
    await gardenCorpus(act);
    expect(kernel.registry.get('search_hybrid')?.effects).toEqual([]);
    const ran = await kernel.pipeline.call({ target: 'search_hybrid', input: { query: 'tomatoes' }, principal: agent });
    expect(ran.status).toBe('ok');
    const answer = ran.status === 'ok' ? ran.value as HybridAnswer : undefined;
    expect(answer?.arms.rerank).toEqual({ ran: true, candidates: 5, model: 'test/reranker' });
    const head = answer!.results.slice(0, 5);
    expect(head.map((hit) => hit.arms.rerank?.rank)).toEqual([1, 2, 3, 4, 5]);
    // Best first by the cross-encoder's own scores.
    const scores = head.map((hit) => hit.arms.rerank!.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});
