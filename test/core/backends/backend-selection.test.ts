import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKEND_REGISTRY } from '../../../core/core-tokens.js';
import type { BackendRegistry } from '../../../core/backends/backend-registry.js';
import type { Principal } from '../../../core/plugin-api.js';
import { startHttpServer } from '../../../core/http/serve.js';
import { caught, useHarness, type UserPlugin } from '../../helpers/harness.js';

const ADMIN_TOKEN = 'qk_backend-selection-admin';

const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };
const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };

/** An embedder plugin whose one backend posts every text to `url`, declaring (or not) that it does. */
function embedderPlugin(url: string, effects: string[], offeredName = 'remote'): UserPlugin {
  return {
    manifest: {
      id: 'echo-embed', version: '0.1.0', kernel: '^0.1.0', description: 'embeds by asking a server', entry: 'index.js', tools: [],
      embedders: [{ name: 'remote', description: 'posts the texts to a server', effects }],
    },
    code: `export default { activate(ctx) {
  ctx.provideBackend('embedder', ${JSON.stringify(offeredName)}, {
    id: 'remote', model: 'echo-1', dimensions: 2,
    async embed(texts) { await fetch(${JSON.stringify(url)}, { method: 'POST', body: JSON.stringify(texts) }); return texts.map((t) => new Float32Array([t.length, 1])); },
  });
  return {};
} };`,
  };
}

/** A search-like plugin whose one action embeds its query with the embedder quire.json selects. */
const finderPlugin: UserPlugin = {
  manifest: {
    id: 'finder', version: '0.1.0', kernel: '^0.1.0', description: 'finds by vectors', entry: 'index.js',
    config: { type: 'object', properties: { embedder: { type: 'string' } }, additionalProperties: false },
    tools: [{ name: 'find', description: 'find', actions: {
      semantic: { description: 'embeds the query', input: { type: 'object', properties: { q: { type: 'string' } } }, effects: [], backends: ['embedder'] },
      why: { description: 'why no embedder', input: { type: 'object' }, effects: [] },
    } }],
  },
  code: `export default { activate(ctx) {
  const handle = ctx.selectBackend('embedder', ctx.config.embedder, 'plugins.finder.config.embedder');
  return { find: {
    async semantic(input) { const chosen = handle.current(); const [v] = await chosen.backend.embed([input.q]); return { by: chosen.plugin + '/' + chosen.name, vector: Array.from(v) }; },
    why() { return { reason: handle.unavailable() ?? null }; },
  } };
} };`,
};

describe('embedders and rerankers offered by plugins and selected by config', () => {
  const harness = useHarness();
  let server: Server;
  let url: string;
  let received: string[];

  beforeEach(async () => {
    received = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      request.on('end', () => { received.push(body); response.end('ok'); });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/embed`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function boot(effects: string[], ref = 'echo-embed', offeredName?: string) {
    return harness.boot({
      userPlugins: { 'echo-embed': embedderPlugin(url, effects, offeredName), finder: finderPlugin },
      config: {
        auth: { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN_TOKEN).digest('hex') }] },
        plugins: { 'echo-embed': { trusted: true }, finder: { trusted: true, config: { embedder: ref } } },
      },
    });
  }

  it('gives an action that uses the selected embedder that embedder\'s effects: the agent is asked, the person\'s call goes out', async () => {
    const kernel = await boot(['dataEgress', 'externalCost']);
    expect(kernel.registry.get('find_semantic')?.effects).toEqual(['dataEgress', 'externalCost']);
    expect(kernel.registry.get('find_semantic')?.declaredEffects).toEqual([]);
    const asked = await kernel.pipeline.call({ target: 'find_semantic', input: { q: 'private words' }, principal: agent });
    expect(asked.status === 'confirmation_required' && asked.confirmation.effects).toEqual(['dataEgress', 'externalCost']);
    expect(received).toEqual([]);
    const done = await kernel.pipeline.call({ target: 'find_semantic', input: { q: 'abc' }, principal: admin });
    expect(done.status === 'ok' && done.value).toEqual({ by: 'echo-embed/remote', vector: [3, 1] });
    expect(received).toEqual(['["abc"]']);
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    const { backends } = await (await fetch(`${server.url}/api/plugins`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as { backends: unknown[] };
    await server.close();
    expect(backends).toEqual([{ kind: 'embedder', plugin: 'echo-embed', name: 'remote', effects: ['dataEgress', 'externalCost'], selected: true }]);
  });

  it('refuses the network to a backend whose manifest entry does not declare dataEgress, whoever calls it', async () => {
    const kernel = await boot([]);
    // Declared local: the agent's call needs no confirmation, and the backend still cannot send anything.
    expect(kernel.registry.get('find_semantic')?.effects).toEqual([]);
    const error = await caught(kernel.pipeline.call({ target: 'find_semantic', input: { q: 'abc' }, principal: agent }));
    expect(error.code).toBe('EGRESS_DENIED');
    expect(error.message).toContain('embedder echo-embed/remote');
    expect(error.message).toContain("does not declare 'dataEgress'");
    // Outside any action (a background indexer), the backend is held to its declaration too.
    const chosen = kernel.container.resolve<BackendRegistry>(BACKEND_REGISTRY).selected('embedder')!;
    expect((await caught(chosen.backend.embed(['x']))).code).toBe('EGRESS_DENIED');
    expect(received).toEqual([]);
  });

  it('says which setting names a backend nobody offers, and lists what is offered', async () => {
    const kernel = await boot(['dataEgress'], 'no-such-plugin');
    const outcome = await kernel.pipeline.call({ target: 'find_why', input: {}, principal: admin });
    expect(outcome.status === 'ok' && outcome.value).toEqual({ reason: "plugins.finder.config.embedder names the embedder 'no-such-plugin', which no active plugin offers (offered: echo-embed/remote)" });
    expect(kernel.registry.get('find_semantic')?.effects).toEqual([]);
  });

  it('refuses a plugin that offers a backend its manifest does not list', async () => {
    const kernel = await boot(['dataEgress'], 'echo-embed', 'unlisted');
    const record = kernel.plugins.getCatalog()!.all.find((candidate) => candidate.ok && candidate.compiled.manifest.id === 'echo-embed')!;
    expect(kernel.plugins.problemsOf(record)?.[0]).toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(kernel.plugins.problemsOf(record)?.[0]?.message).toContain("the embedder 'unlisted' but its manifest does not list it in 'embedders'");
  });

  it('refuses a reference that is not a plugin id', async () => {
    const kernel = await boot(['dataEgress'], '../etc');
    const record = kernel.plugins.getCatalog()!.all.find((candidate) => candidate.ok && candidate.compiled.manifest.id === 'finder')!;
    expect(kernel.plugins.problemsOf(record)?.[0]).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(kernel.plugins.problemsOf(record)?.[0]?.message).toContain("plugins.finder.config.embedder: '../etc' is not '<plugin id>' or '<plugin id>/<embedder name>'");
    expect(kernel.registry.get('find_semantic')).toBeUndefined();
  });
});
