import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIEmbedder } from '../../../plugins/providers/openai-embedder.js';
import { caught } from '../../helpers/harness.js';
import { FakeEmbeddings } from '../search-semantic/fake-embeddings.js';

const KEY = 'sk-quire-embedder-test-secret';

describe('the OpenAI-compatible embedder', () => {
  const fakes: FakeEmbeddings[] = [];
  afterEach(async () => { await Promise.all(fakes.splice(0).map((fake) => fake.close())); });

  async function embedder(settings: { requestTimeoutMs?: number } = {}): Promise<{ fake: FakeEmbeddings; embedder: OpenAIEmbedder }> {
    const fake = await FakeEmbeddings.start();
    fakes.push(fake);
    return { fake, embedder: new OpenAIEmbedder({ provider: 'openai', model: 'fake-embed', baseURL: fake.url, ...settings }, KEY) };
  }

  it('names a refused key by its endpoint, never with the server\'s words (which may quote the key)', async () => {
    const { fake, embedder: openai } = await embedder();
    fake.refuseKey = true;
    const error = await caught(openai.embed(['some text']));
    expect(error).toMatchObject({ category: 'authentication', message: `the embedder at ${fake.url} refused the key` });
    expect(JSON.stringify(error)).not.toContain(KEY);
  });

  it('gives up a batch whose answer stalls after its headers, within its time limit', async () => {
    const { fake, embedder: openai } = await embedder({ requestTimeoutMs: 1000 });
    fake.stallIf = () => true;
    expect(await caught(openai.embed(['some text']))).toMatchObject({ category: 'timeout', message: 'the embedder did not answer within 1000 ms' });
    fake.stallIf = undefined;
    expect(await openai.embed(['some text'])).toHaveLength(1);
  });

  it.each([
    ['duplicate-index', 'the embedder answered no vector for text 1'],
    ['not-a-number', 'the embedder answered a vector for text 0 that is not all numbers'],
  ] as const)('refuses an answer with %s', async (corrupt, message) => {
    const { fake, embedder: openai } = await embedder();
    fake.corrupt = corrupt;
    expect((await caught(openai.embed(['one text', 'another text']))).message).toContain(message);
  });

  it('takes an answer whose entries carry no index in the texts\' order', async () => {
    const { fake, embedder: openai } = await embedder();
    fake.corrupt = 'no-index';
    const [first, second] = await openai.embed(['one text', 'another text']);
    fake.corrupt = undefined;
    const [one, another] = await openai.embed(['one text', 'another text']);
    expect([Array.from(first!), Array.from(second!)]).toEqual([Array.from(one!), Array.from(another!)]);
  });
});
