import { afterEach } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';
import { actor, type Act } from '../blocks/blocks-harness.js';
import { DIMENSIONS, FakeEmbeddings, NGRAM_SOURCE } from './fake-embeddings.js';

export interface Created { id: string }

export interface SemanticHit { id: string; documentId: string; notebook: string; snippet: string; score: number; rank: number; arms: { semantic: { rank: number; score: number } } }
export interface SemanticFound { results: SemanticHit[]; complete: boolean; note?: string; model: string; exact: boolean }

export interface Status {
  enabled: boolean; model: string; total: number; indexed: number; pending: number; failed: number; gaveUp: number; stale: number;
  ignored: Record<string, number>; lastError: string | null; comparing: boolean; queued: number; vectorIndex: { state: string; size: number; problem?: string };
}

/** A local embedder (no effects: it cannot reach the network) computing the fake's vectors in-process. */
export const localEmbedderPlugin: UserPlugin = {
  manifest: {
    id: 'ngram-local', version: '0.1.0', kernel: '^0.1.0', description: 'trigram vectors, in process', entry: 'index.js', tools: [],
    embedders: [{ name: 'ngram', description: 'computes vectors here', effects: [] }],
  },
  code: `${NGRAM_SOURCE}
export default { activate(ctx) {
  ctx.provideBackend('embedder', 'ngram', {
    id: 'ngram', model: 'ngram-64', dimensions: ${DIMENSIONS},
    async embed(texts) { return texts.map((t) => ngramVector(t, ${DIMENSIONS})); },
  });
  return {};
} };`,
};

export interface SemanticBootOptions {
  workspace?: string;
  /** 'remote' (default): the providers plugin's OpenAI embedder against the fake; 'local': the user plugin; 'none': no embedder configured. */
  embedder?: 'remote' | 'local' | 'none';
  semantic?: Record<string, unknown>;
  config?: KernelConfigFile;
  embedModel?: string;
  /** The embedder's `dimensions` (the fake answers vectors of that size). */
  embedDimensions?: number;
}

/** Kernels with the real plugins, search-semantic using the loopback fake (or a local embedder). */
export function useSemantic() {
  const harness = useHarness();
  const fakes: FakeEmbeddings[] = [];
  afterEach(async () => { for (const fake of fakes.splice(0)) await fake.close(); });

  async function fakeServer(): Promise<FakeEmbeddings> {
    const fake = await FakeEmbeddings.start();
    fakes.push(fake);
    return fake;
  }

  async function boot(fake: FakeEmbeddings | undefined, options: SemanticBootOptions = {}): Promise<{ kernel: Kernel; act: Act }> {
    const embedder = options.embedder ?? 'remote';
    const semantic: Record<string, unknown> = {
      ...(embedder === 'remote' ? { embedder: 'providers' } : embedder === 'local' ? { embedder: 'ngram-local' } : {}),
      retry: { baseMs: 20, maxMs: 200, maxFailures: 3, pauseMs: 20 }, batchSize: 4,
      ...options.semantic,
    };
    const kernel = await harness.boot({
      realManifests: true,
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(embedder === 'local' ? { userPlugins: { 'ngram-local': localEmbedderPlugin } } : {}),
      config: {
        ...options.config,
        plugins: {
          ...options.config?.plugins,
          blocks: { config: { watch: false, welcome: false } },
          ...(fake ? { providers: { config: { embedder: { provider: 'openai', model: options.embedModel ?? 'fake-embed', baseURL: fake.url, apiKeyEnv: false, ...(options.embedDimensions ? { dimensions: options.embedDimensions } : {}) } } } } : {}),
          ...(embedder === 'local' ? { 'ngram-local': { trusted: true } } : {}),
          'search-semantic': { ...options.config?.plugins?.['search-semantic'], config: semantic },
        },
      },
    });
    return { kernel, act: actor(kernel) };
  }

  return { ...harness, boot, fakeServer };
}

/** Polls until `check` holds (a wait, not a timed assertion: the test fails only if it never holds). */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, limitMs = 20_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`waited in vain for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until nothing is pending and the comparison at start is done; returns the status. */
export async function embedded(act: Act, extra: (status: Status) => boolean = () => true): Promise<Status> {
  return until('every block embedded', async () => {
    const status = await act<Status>('embeddings_status', {});
    return !status.comparing && status.queued === 0 && status.pending === 0 && status.failed === 0 && extra(status) ? status : undefined;
  });
}

export function semantic(act: Act, query: string, extra: Record<string, unknown> = {}, principal?: Principal): Promise<SemanticFound> {
  return act<SemanticFound>('search_semantic', { query, ...extra }, principal);
}
