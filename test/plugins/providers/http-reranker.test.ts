import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND_REGISTRY } from '../../../core/core-tokens.js';
import type { BackendRegistry } from '../../../core/backends/backend-registry.js';
import type { Reranker } from '../../../core/backends/contracts.js';
import { firstCodePoints as cut } from '../../../core/util/code-points.js';
import { caught } from '../../helpers/harness.js';
import { useBlocks } from '../blocks/blocks-harness.js';
import { RerankFake, type RerankShape } from './rerank-fake.js';

const KEY = 'rk-quire-rerank-test-key';
const KEY_ENV = 'QUIRE_TEST_RERANK_KEY';
const DOCUMENTS = ['Basil grows beside tomatoes.', 'The quick brown fox.', 'Tomatoes need warm soil and full sun.', 'Sun and soil.'];

describe('the HTTP /rerank reranker', () => {
  const { boot } = useBlocks();
  const fakes: RerankFake[] = [];
  afterEach(async () => {
    delete process.env[KEY_ENV];
    await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  });

  async function reranker(shape: RerankShape, settings: Record<string, unknown> = {}): Promise<{ fake: RerankFake; reranker: Reranker; effects: readonly string[] }> {
    const fake = await RerankFake.start(shape);
    fakes.push(fake);
    process.env[KEY_ENV] = KEY;
    const { kernel } = await boot({ config: { plugins: { providers: { config: { reranker: { shape, baseURL: fake.url, model: 'rerank-test', apiKeyEnv: KEY_ENV, ...settings } } } } } });
    const selected = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY).select('reranker', 'providers', 'test', 'test').current()!;
    expect(selected.name).toBe('http');
    return { fake, reranker: selected.backend, effects: selected.effects };
  }

  it.each([
    ['cohere', { model: 'rerank-test', query: 'tomatoes sun', documents: DOCUMENTS }],
    ['jina', { model: 'rerank-test', query: 'tomatoes sun', documents: DOCUMENTS, return_documents: false }],
    ['voyage', { query: 'tomatoes sun', documents: DOCUMENTS, model: 'rerank-test' }],
    ['tei', { query: 'tomatoes sun', texts: DOCUMENTS, truncate: true }],
  ] as const)('speaks %s: its path and request, and one score per document in the documents\' order', async (shape, body) => {
    const { fake, reranker: http, effects } = await reranker(shape);
    expect(effects).toEqual(['dataEgress', 'externalCost']);
    const scores = await http.rerank('tomatoes sun', DOCUMENTS);
    expect(scores).toHaveLength(4);
    // The fake answers best first; the scores come back in the documents' order.
    expect(scores[2]).toBeGreaterThan(scores[3]!);
    expect(scores[3]).toBeGreaterThan(scores[0]!);
    expect(scores[0]).toBeGreaterThan(scores[1]!);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe(fake.path);
    expect(fake.requests[0]!.body).toEqual(body);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it.each([
    ['one-short', 'the reranker answered 3 scores for 4 documents'],
    ['duplicate-index', 'the reranker answered the index 2 twice'],
    ['index-out-of-range', 'the reranker answered the index 4, outside 0..3'],
    ['not-json', 'the reranker answered something that is not JSON: <html>gateway</html>'],
    ['wrong-shape', "the cohere reranker's answer is not its shape: the answer has no 'results' list"],
    ['http-500', 'the reranker answered HTTP 500: {"message":"internal error"}'],
    ['huge', 'the reranker answered more than 4000000 bytes, not a rerank answer'],
  ] as const)('rejects an answer that is %s', async (behaviour, message) => {
    const { fake, reranker: http } = await reranker('cohere');
    fake.script.push(behaviour);
    expect((await caught(http.rerank('tomatoes sun', DOCUMENTS))).message).toBe(message);
  });

  it('never shows the key a server echoes in its answer: a refused key is named by its endpoint, others have it masked', async () => {
    const { fake, reranker: http } = await reranker('cohere');
    fake.script.push('http-401-echo', 'http-400-echo');
    const refused = await caught(http.rerank('q', ['a']));
    expect(refused).toMatchObject({ category: 'authentication', message: `the reranker at ${fake.url}${fake.path} refused the key` });
    const bad = await caught(http.rerank('q', ['a']));
    expect(bad.message).not.toContain(KEY);
    expect(bad.message).toContain('[key]');
    // A key where the message is cut: masked before the cut (cut first, most of it went on, unmasked).
    fake.script.push('http-400-echo-late', 'not-json-echo');
    for (const cut of [await caught(http.rerank('q', ['a', 'b'])), await caught(http.rerank('q', ['a', 'b']))]) expect(cut.message).not.toContain(KEY.slice(0, 8));
  });

  it('gives up after requestTimeoutMs, and stops at once when the caller aborts', async () => {
    const { fake, reranker: http } = await reranker('tei', { requestTimeoutMs: 200 });
    fake.script.push('hang', 'hang');
    expect(await caught(http.rerank('q', ['a', 'b']))).toMatchObject({ category: 'timeout', message: 'the reranker did not answer within 200 ms' });
    const controller = new AbortController();
    const pending = http.rerank('q', ['a', 'b'], controller.signal);
    controller.abort(new Error('search cancelled'));
    expect((await caught(pending)).message).toBe('search cancelled');
  });

  it('cuts each document to maxCharacters characters (not bytes, never inside a surrogate pair)', async () => {
    const { fake, reranker: http } = await reranker('voyage', { maxCharacters: 100 });
    await http.rerank('q', ['番'.repeat(150), '🍅'.repeat(120), 'short']);
    expect(fake.requests[0]!.body.documents).toEqual(['番'.repeat(100), '🍅'.repeat(100), 'short']);
    expect(cut('a🍅b', 2)).toBe('a🍅');
  });

  it('sends no key to a TEI server unless one is named, and is not offered when a named key is missing', async () => {
    const fake = await RerankFake.start('tei');
    fakes.push(fake);
    const { kernel } = await boot({ config: { plugins: { providers: { config: { reranker: { shape: 'tei', baseURL: fake.url } } } } } });
    const registry = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY);
    await registry.select('reranker', 'providers', 'test', 'test').current()!.backend.rerank('q', ['a', 'b']);
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    const { kernel: missing } = await boot({ config: { plugins: { providers: { config: { reranker: { shape: 'cohere', model: 'rerank-v3.5', apiKeyEnv: 'QUIRE_TEST_NO_SUCH_KEY' } } } } } });
    expect(missing.container.resolve<BackendRegistry>(BACKEND_REGISTRY).select('reranker', 'providers', 'test', 'test').unavailable()).toContain("which cannot be used: the cohere reranker's key is missing: set the environment variable QUIRE_TEST_NO_SUCH_KEY");
  });

  it('refuses at start a TEI reranker without an address and a Cohere or Voyage one without a model', async () => {
    for (const reranker of [{ shape: 'tei' }, { shape: 'cohere', baseURL: 'http://127.0.0.1:9' }, { shape: 'voyage' }]) {
      const error = await caught(boot({ config: { plugins: { providers: { config: { reranker } } } } }));
      expect([reranker.shape, error.code]).toEqual([reranker.shape, 'PLUGIN_CONFIG_INVALID']);
      expect(error.message).toContain(reranker.shape === 'tei' ? "/plugins/providers/config/reranker/baseURL: 'baseURL' is required" : "/plugins/providers/config/reranker/model: 'model' is required");
    }
  });
});
