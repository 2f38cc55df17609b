import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND_REGISTRY } from '../../../core/core-tokens.js';
import type { BackendRegistry } from '../../../core/backends/backend-registry.js';
import type { Embedder } from '../../../core/backends/contracts.js';
import { ModelWireServer, type Reply } from '../../../fakes/model-wire-server.js';
import { caught } from '../../helpers/harness.js';
import { useBlocks } from '../blocks/blocks-harness.js';

const KEY = 'gm-quire-embed-test-key';
const KEY_ENV = 'QUIRE_TEST_GEMINI_EMBED_KEY';

/** Gemini's batchEmbedContents answer: `{embeddings: [{values}]}`, one per request, in order. */
const vectors = (...values: number[][]): Reply => ({ kind: 'json', status: 200, body: { embeddings: values.map((entry) => ({ values: entry })) } });

describe('the Gemini embedder through @google/genai', () => {
  const { boot } = useBlocks();
  const fakes: ModelWireServer[] = [];
  afterEach(async () => {
    delete process.env[KEY_ENV];
    await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  });

  async function embedder(settings: Record<string, unknown> = {}): Promise<{ fake: ModelWireServer; embedder: Embedder; effects: readonly string[]; name: string }> {
    const fake = await ModelWireServer.start([]);
    fakes.push(fake);
    process.env[KEY_ENV] = KEY;
    const { kernel } = await boot({ config: { plugins: { providers: { config: { embedder: { provider: 'gemini', model: 'gemini-embedding-001', baseURL: fake.url, apiKeyEnv: KEY_ENV, ...settings } } } } } });
    const selected = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY).select('embedder', 'providers', 'test', 'test').current()!;
    return { fake, embedder: selected.backend, effects: selected.effects, name: selected.name };
  }

  it('sends documents as RETRIEVAL_DOCUMENT in batches and queries as RETRIEVAL_QUERY, on Gemini\'s wire', async () => {
    const { fake, embedder: gemini, effects, name } = await embedder({ batchSize: 2, dimensions: 3 });
    expect([name, effects]).toEqual(['gemini', ['dataEgress', 'externalCost']]);
    fake.reply(vectors([1, 0, 0], [0, 1, 0]), vectors([0, 0, 1]), vectors([0.5, 0.5, 0]));
    const documents = await gemini.embed(['tomatoes', '番茄', 'basil']);
    expect(documents.map((vector) => Array.from(vector))).toEqual([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    expect(Array.from(await gemini.embedQuery!('what grows in sun'))).toEqual([0.5, 0.5, 0]);
    expect([gemini.model, gemini.dimensions]).toEqual(['gemini-embedding-001', 3]);
    expect(fake.posts.map((request) => request.path)).toEqual(Array(3).fill('/v1beta/models/gemini-embedding-001:batchEmbedContents'));
    expect(fake.posts[0]!.headers['x-goog-api-key']).toBe(KEY);
    expect(fake.posts[0]!.body).toEqual({ requests: [
      { content: { role: 'user', parts: [{ text: 'tomatoes' }] }, taskType: 'RETRIEVAL_DOCUMENT', outputDimensionality: 3, model: 'models/gemini-embedding-001' },
      { content: { role: 'user', parts: [{ text: '番茄' }] }, taskType: 'RETRIEVAL_DOCUMENT', outputDimensionality: 3, model: 'models/gemini-embedding-001' },
    ] });
    expect(fake.posts[1]!.body).toMatchObject({ requests: [{ content: { parts: [{ text: 'basil' }] }, taskType: 'RETRIEVAL_DOCUMENT' }] });
    expect(fake.posts[2]!.body).toEqual({ requests: [{ content: { role: 'user', parts: [{ text: 'what grows in sun' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 3, model: 'models/gemini-embedding-001' }] });
  });

  it('learns the dimensions from the first answer when none are configured, and sends no outputDimensionality', async () => {
    const { fake, embedder: gemini } = await embedder();
    expect(gemini.dimensions).toBe(0);
    fake.reply(vectors([1, 2, 3, 4]));
    await gemini.embed(['a']);
    expect(gemini.dimensions).toBe(4);
    expect((fake.posts[0]!.body.requests as Record<string, unknown>[])[0]).not.toHaveProperty('outputDimensionality');
  });

  it('refuses an answer with a wrong count or wrong dimensions, naming what was wrong', async () => {
    const { fake, embedder: gemini } = await embedder({ dimensions: 3 });
    fake.reply(vectors([1, 0, 0]), vectors([1, 0, 0], [1, 0]), vectors([1, 0, 0, 0]), vectors([1, 'x' as unknown as number, 0]));
    expect((await caught(gemini.embed(['a', 'b']))).message).toBe('Gemini answered 1 embeddings for 2 texts');
    expect((await caught(gemini.embed(['a', 'b']))).message).toBe('Gemini answered a vector of 2 dimensions for text 1, configured 3 (plugins.providers.config.embedder.dimensions)');
    expect((await caught(gemini.embedQuery!('q'))).message).toContain('4 dimensions for text 0, configured 3');
    expect((await caught(gemini.embed(['a']))).message).toBe('Gemini answered no usable vector for text 0');
  });

  it('reports a refused key as an authentication error and makes no retries', async () => {
    const { fake, embedder: gemini } = await embedder();
    fake.reply({ kind: 'json', status: 400, body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ reason: 'API_KEY_INVALID' }] } } },
      { kind: 'json', status: 503, body: { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } } });
    expect(await caught(gemini.embed(['a']))).toMatchObject({ category: 'authentication' });
    expect(await caught(gemini.embed(['a']))).toMatchObject({ category: 'server' });
    expect(fake.posts).toHaveLength(2);
  });

  it('is not offered when its key is missing: the embedder reference then says so', async () => {
    const { kernel } = await boot({ config: { plugins: { providers: { config: { embedder: { provider: 'gemini', model: 'gemini-embedding-001', apiKeyEnv: 'QUIRE_TEST_NO_SUCH_KEY' } } } } } });
    const handle = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY).select('embedder', 'providers', 'test', 'test');
    expect(handle.current()).toBeUndefined();
    expect(handle.unavailable()).toContain("names the embedder 'providers', which cannot be used: the gemini key is missing: set the environment variable QUIRE_TEST_NO_SUCH_KEY");
  });
});
