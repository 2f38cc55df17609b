import { describe, expect, it } from 'vitest';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelProvider } from '../../../core/turn/model-provider.js';
import { BACKEND_REGISTRY } from '../../../core/core-tokens.js';
import type { BackendRegistry } from '../../../core/backends/backend-registry.js';
import { ModelWireServer } from '../../../fakes/model-wire-server.js';
import { resolveKey } from '../../../plugins/providers/config.js';
import { KEY, PROTOCOLS, sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

/** What each protocol calls the settings quire.json gives, in the first request's body. */
const expected: Record<string, (body: Record<string, unknown>) => void> = {
  'openai-chat': (body) => expect(body).toMatchObject({ model: 'fake-model', max_completion_tokens: 1234, temperature: 0.5, reasoning_effort: 'high' }),
  'openai-responses': (body) => expect(body).toMatchObject({ model: 'fake-model', max_output_tokens: 1234, temperature: 0.5, reasoning: { effort: 'high' } }),
  // With thinking on, Anthropic refuses any temperature but its default: it is left out.
  anthropic: (body) => {
    expect(body).toMatchObject({ model: 'fake-model', max_tokens: 1234, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    expect(body.temperature).toBeUndefined();
  },
  gemini: (body) => expect(body).toMatchObject({ generationConfig: { maxOutputTokens: 1234, temperature: 0.5, thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' } } }),
};

describe.each(PROTOCOLS)('configuring %s', (protocol) => {
  it('sends the configured limits, temperature and reasoning effort, and gives the turn loop the context limit', async () => {
    const { kernel, fake, session, turn } = await start(protocol, { model: { maxOutputTokens: 1234, temperature: 0.5, reasoningEffort: 'high', contextLimit: 32_000 } });
    fake.reply(sse(protocol, { text: 'ok' }));
    await turn(await session(), 'hi');
    expected[protocol]!(fake.posts[0]!.body);
    expect(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER).limits).toEqual({ contextLimit: 32_000, maxOutputTokens: 1234 });
  });
});

describe('what the providers manifest declares', () => {
  it('shows every backend with the effects of a call to it: data leaves the machine and costs money, but for a server on this machine', async () => {
    const { http } = await start('openai-chat');
    const { plugins } = (await (await http('GET', '/api/plugins')).json()) as { plugins: { id: string; providers?: { name: string; effects: string[] }[]; embedders?: { effects: string[] }[] }[] };
    const providers = plugins.find((plugin) => plugin.id === 'providers')!;
    expect(providers.providers!.map((backend) => backend.name)).toEqual(['local', 'openai-chat', 'openai-responses', 'anthropic', 'gemini']);
    const [local, ...remote] = providers.providers!;
    expect(local!.effects).toEqual([]);
    for (const backend of [...remote, ...providers.embedders!]) expect(backend.effects).toEqual(['dataEgress', 'externalCost']);
  });
});

describe('switching provider', () => {
  it('is a config change: a session goes on with another provider, which gets the history in its own shape and none of the other protocol\'s state', async () => {
    const first = await start('anthropic');
    first.fake.reply(
      sse('anthropic', { reasoning: 'thinking', secret: 'ANTHROPIC-SIGNATURE', calls: [{ id: 'toolu_1', name: 'notebook_list', args: {} }] }),
      sse('anthropic', { text: 'You have no notebooks yet.' }),
    );
    const id = await first.session();
    await first.turn(id, 'what notebooks?');
    const root = first.kernel.workspace.root;
    await first.kernel.close();

    const second = await start('gemini', { workspace: root });
    second.fake.reply(sse('gemini', { text: 'Still none.' }));
    const { events } = await second.turn(id, 'and now?');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    const body = JSON.stringify(second.fake.posts[0]!.body);
    expect(body).not.toContain('ANTHROPIC-SIGNATURE');
    const contents = second.fake.posts[0]!.body.contents as { role: string; parts: Record<string, unknown>[] }[];
    expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user']);
    expect(contents[1]!.parts[0]).toEqual({ functionCall: { id: 'toolu_1', name: 'notebook_list', args: {} } });
    expect(contents[2]!.parts[0]).toMatchObject({ functionResponse: { id: 'toolu_1', name: 'notebook_list' } });
  });
});

describe('the OpenAI-compatible embedder', () => {
  it('embeds in batches, in order, reports the model id and learns the dimensions', async () => {
    const fake = await ModelWireServer.start([]);
    try {
      const served = (batch: string[]) => ({ kind: 'json' as const, status: 200, body: { object: 'list', model: 'embed-v2-served', usage: { prompt_tokens: 3, total_tokens: 3 }, data: batch.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, index, 0.5] })).reverse() } });
      fake.reply(served(['a', 'bb']), served(['ccc']));
      process.env.QUIRE_TEST_EMBED_KEY = KEY;
      const { kernel } = await start('openai-chat', { plugins: { embedder: { provider: 'openai', model: 'embed-v2', baseURL: `${fake.url}/v1`, apiKeyEnv: 'QUIRE_TEST_EMBED_KEY', batchSize: 2 } } });
      const embedder = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY).select('embedder', 'providers', 'test', 'test').current()!.backend;
      expect(embedder.dimensions).toBe(0);
      const vectors = await embedder.embed(['a', 'bb', 'ccc']);
      expect(vectors.map((vector) => Array.from(vector))).toEqual([[1, 0, 0.5], [2, 1, 0.5], [3, 0, 0.5]]);
      expect([embedder.model, embedder.dimensions]).toEqual(['embed-v2-served', 3]);
      expect(fake.posts.map((request) => request.body.input)).toEqual([['a', 'bb'], ['ccc']]);
      expect(fake.posts[0]!.body).toMatchObject({ model: 'embed-v2', encoding_format: 'float' });
    } finally {
      delete process.env.QUIRE_TEST_EMBED_KEY;
      await fake.close();
    }
  });
});

describe('a key pasted where its variable\'s name goes', () => {
  it('is refused without being shown for common key shapes, and a name that is set, or short, is a name whatever it looks like', () => {
    const field = 'plugins/providers/config/model';
    const refused = (variable: string, env: NodeJS.ProcessEnv = {}): string => {
      try {
        resolveKey({ provider: 'openai-chat', apiKeyEnv: variable }, field, env);
        return 'resolved';
      } catch (error) {
        return (error as Error).message.includes('looks like a key') ? 'looks like a key' : 'missing';
      }
    };
    // Hugging Face (letters only after its prefix), a 64-character hex key: they were taken for names, and repeated.
    expect(refused('hf_abcdefghijklmnopqrstuvwxyzABCD')).toBe('looks like a key');
    expect(refused('a3f9'.repeat(16))).toBe('looks like a key');
    expect(refused('AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q')).toBe('looks like a key');
    // A long mixed-case name that is set is a name (it was refused); a short one is said to be missing.
    const long = 'MyCompanyOpenAIKeyForProduction2024';
    expect(refused(long, { [long]: 'sk-secret' })).toBe('resolved');
    expect(refused('hf_token')).toBe('missing');
    // Not a name at all: OpenAI's and Anthropic's keys hold hyphens (the schema refused them, and the kernel did not start).
    expect(refused('sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34')).toBe('looks like a key');
    expect(refused('sk-ant-api03-abcdefghijklmnop')).toBe('looks like a key');
    expect(refused('MY-KEY', { 'MY-KEY': 'sk-secret' })).toBe('looks like a key');
  });
});
