import { createHash } from 'node:crypto';
import { afterEach } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { createHttpApp } from '../../../core/http/app.js';
import type { Principal } from '../../../core/plugin-api.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';
import { actor, type Act } from '../blocks/blocks-harness.js';
import { RerankFake, type RerankShape } from '../providers/rerank-fake.js';

export const ADMIN_TOKEN = 'qk_hybrid-admin';
export const READER_TOKEN = 'qk_hybrid-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A stand-in for search-semantic (trusted user plugin providing `search.semantic`) whose vectors are
 * fixed: a text's vector counts its words of three topics, so "vegetables" is near "tomatoes" with no
 * word in common. It honours the caller's scope as the real one must, unless `leaky` (to show that
 * hybrid search holds the scope even then); with `embedder` it embeds the query with the selected
 * embedder first, so an action using it carries that embedder's effects.
 */
export const FAKE_SEMANTIC: UserPlugin = {
  manifest: {
    id: 'fake-semantic', version: '0.1.0', kernel: '^0.1.0', description: 'semantic search from fixed topic vectors', entry: 'index.js',
    requires: ['blocks.index'], provides: ['search.semantic'], tools: [],
    config: { type: 'object', additionalProperties: false, properties: { embedder: { type: 'string' }, leaky: { type: 'boolean' }, off: { type: 'boolean' }, fail: { type: 'boolean' }, incomplete: { type: 'boolean' } } },
  },
  code: `
const TOPICS = [['tomato', 'basil', 'soil', 'sun', 'vegetable', 'garden', 'grow', 'plant'], ['recipe', 'cook', 'soup', 'dessert', 'bake'], ['fox', 'dog', 'cat', 'animal']];
const vector = (text) => { const lower = text.toLowerCase(); return TOPICS.map((words) => words.filter((word) => lower.includes(word)).length); };
const cosine = (a, b) => { const dot = a.reduce((sum, x, i) => sum + x * b[i], 0); const n = Math.hypot(...a) * Math.hypot(...b); return n === 0 ? 0 : dot / n; };
export default { activate(ctx) {
  const index = ctx.get('blocks.index');
  const handle = ctx.config.embedder ? ctx.selectBackend('embedder', ctx.config.embedder, 'plugins.fake-semantic.config.embedder') : undefined;
  globalThis.__fakeSemanticQueries = [];
  ctx.provide('search.semantic', {
    unavailable() { return ctx.config.off ? 'semantic search has no embedder (plugins.fake-semantic.config.embedder)' : undefined; },
    async search(query, call) {
      globalThis.__fakeSemanticQueries.push(query);
      if (ctx.config.fail) throw new Error('the embedder is unreachable');
      if (handle) await handle.current().backend.embed([query.query]);
      const q = vector(query.query);
      const rows = index.reader.prepare('SELECT id, notebook, content FROM blocks').all();
      const offset = query.offset ?? 0;
      const hits = rows
        .filter((row) => (ctx.config.leaky || index.visibleTo(call, row.notebook)) && (!query.notebooks || query.notebooks.includes(row.notebook)))
        .map((row) => ({ id: row.id, score: cosine(q, vector(row.content)) }))
        .filter((hit) => hit.score > 0)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(offset, offset + query.limit)
        .map((hit, i) => ({ ...hit, rank: offset + i + 1 }));
      return { hits, complete: !ctx.config.incomplete, ...(ctx.config.incomplete ? { note: 'semantic results are incomplete: 3 blocks are being embedded' } : {}), model: 'topics-3', exact: true };
    },
  });
  return {};
} };`,
};

/** A local reranker (declares no effects): shorter texts first; keeps what it was given in globalThis.__shortFirstSeen. */
export const LOCAL_RERANKER: UserPlugin = {
  manifest: {
    id: 'short-first', version: '0.1.0', kernel: '^0.1.0', description: 'a local reranker', entry: 'index.js', tools: [],
    rerankers: [{ name: 'length', description: 'scores shorter texts higher, on this machine', effects: [] }],
  },
  code: `export default { activate(ctx) {
  globalThis.__shortFirstSeen = [];
  ctx.provideBackend('reranker', 'length', { id: 'length', model: 'length-1', async rerank(query, documents) { globalThis.__shortFirstSeen.push(...documents); return documents.map((text) => -text.length); } });
  return {};
} };`,
};

export interface HybridBootOptions {
  /** The fake semantic plugin's config, or false to leave it out (search-semantic stays as configured). */
  semantic?: Record<string, unknown> | false;
  /** A fake HTTP reranker of this shape, selected through providers and rerank. */
  remoteReranker?: RerankShape;
  localReranker?: boolean;
  userPlugins?: Record<string, UserPlugin>;
  workspace?: string;
  plugins?: NonNullable<KernelConfigFile['plugins']>;
}

export interface Created { id: string }
export interface HybridHit { id: string; notebook: string; snippet: string; rank: number; score: number; arms: { fulltext?: { rank: number; score: number }; semantic?: { rank: number; score: number }; rerank?: { rank: number; score: number } } }
export interface HybridAnswer {
  total: number; page: number; pageSize: number; fellBackToFulltext: boolean; note?: string; results: HybridHit[];
  arms: { fulltext: { ran: boolean }; semantic: { ran: boolean; reason?: string; model?: string }; rerank: { ran: boolean; reason?: string; model?: string; candidates?: number } };
}

export const admin: Principal = { kind: 'person', name: 'alice', role: 'admin' };
export const reader: Principal = { kind: 'person', name: 'rita', role: 'reader' };

/** Real native plugins with the fakes above; search-semantic is disabled when the fake stands in for it. */
export function useHybrid() {
  const harness = useHarness();
  const fakes: RerankFake[] = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  });

  async function boot(options: HybridBootOptions = {}) {
    const plugins: NonNullable<KernelConfigFile['plugins']> = { blocks: { config: { watch: false, welcome: false } } };
    const userPlugins: Record<string, UserPlugin> = { ...options.userPlugins };
    if (options.semantic !== false) {
      userPlugins['fake-semantic'] = FAKE_SEMANTIC;
      plugins['fake-semantic'] = { trusted: true, config: options.semantic ?? {} };
      plugins['search-semantic'] = { enabled: false };
    }
    let fake: RerankFake | undefined;
    if (options.remoteReranker) {
      fake = await RerankFake.start(options.remoteReranker);
      fakes.push(fake);
      plugins.providers = { config: { reranker: { shape: options.remoteReranker, baseURL: fake.url, model: 'rerank-test', apiKeyEnv: false } } };
      plugins.rerank = { config: { reranker: 'providers', candidates: 5 } };
    }
    if (options.localReranker) {
      userPlugins['short-first'] = LOCAL_RERANKER;
      plugins['short-first'] = { trusted: true };
      plugins.rerank = { config: { reranker: 'short-first', candidates: 5 } };
    }
    for (const [id, entry] of Object.entries(options.plugins ?? {})) plugins[id] = { ...plugins[id], ...entry };
    const kernel = await harness.boot({
      realManifests: true, userPlugins, ...(options.workspace ? { workspace: options.workspace } : {}),
      config: { auth: { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN_TOKEN) }, { name: 'rita', role: 'reader', sha256: sha(READER_TOKEN) }] }, plugins },
    });
    const act: Act = actor(kernel);
    const app = createHttpApp(kernel);
    const http = async (path: string, body: unknown, token = ADMIN_TOKEN) => app.request(path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { kernel, act, fake, http };
  }
  return { ...harness, boot };
}

/** Two notebooks: Garden (published) and Private, whose one block also speaks of tomatoes. */
export async function gardenCorpus(act: Act) {
  const garden = await act<Created>('notebook_create', { name: 'Garden', access: 'published' });
  await act('document_create', { notebook: garden.id, title: 'Planting', markdown: [
    '# Planting tomatoes',
    'Tomatoes need warm soil and full sun.',
    'Basil grows well beside tomatoes.',
    'Vegetables want a sunny garden bed.',
    'The quick brown fox jumps over the lazy dog.',
    'Tomato soup recipe for cold days.',
  ].join('\n\n') });
  const secret = await act<Created>('notebook_create', { name: 'Private' });
  await act('document_create', { notebook: secret.id, title: 'Plans', markdown: 'Secret tomatoes plans for the garden.' });
  return { garden: garden.id, secret: secret.id };
}

/** A hit's text without the full-text highlighting. */
export const text = (hit: { snippet: string }) => hit.snippet.replace(/<\/?mark>/g, '');
