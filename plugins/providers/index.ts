import { definePlugin, KernelError, type PluginContext } from '../../core/index.js';
import { ModelError, type ModelEvent, type ModelProvider } from '../../core/turn/model-provider.js';
import { checkBaseURL, checkLocal, resolveKey, type ModelConfig, type ProvidersConfig } from './config.js';
import { GeminiEmbedder } from './gemini-embedder.js';
import { HttpReranker, rerankerKey } from './http-reranker.js';
import { LazyProvider } from './lazy-provider.js';
import { OpenAIEmbedder } from './openai-embedder.js';

/**
 * Stands in when no model can be used (none configured, key missing): turns are refused before they
 * start, with the reason, and the rest of the kernel runs as usual.
 */
class UnavailableModel implements ModelProvider {
  readonly id = 'unavailable';
  readonly unavailable?: { message: string; field?: string };
  /** `configured`: a model is set up and cannot be used (said at start); none set up is no mistake. */
  constructor(readonly reason: KernelError, configured = true) {
    const field = reason.details.field;
    if (configured) this.unavailable = { message: reason.message, ...(typeof field === 'string' ? { field } : {}) };
  }
  prepare(): Promise<void> {
    return Promise.reject(this.reason);
  }
  async *stream(): AsyncIterable<ModelEvent> {
    throw new ModelError('authentication', this.reason.message);
  }
}

function modelFrom(config: ModelConfig | undefined): ModelProvider {
  if (!config) return new UnavailableModel(new KernelError('MODEL_UNAVAILABLE', 'no model is configured: set plugins.providers.config.model (provider, model) in quire.json', { details: { field: 'plugins/providers/config/model' } }), false);
  try {
    checkBaseURL(config.baseURL, 'plugins/providers/config/model');
    checkLocal(config, 'plugins/providers/config/model');
    return new LazyProvider(config, resolveKey(config, 'plugins/providers/config/model'));
  } catch (error) {
    if (error instanceof KernelError) return new UnavailableModel(error);
    throw error;
  }
}

function embedderFrom(ctx: PluginContext<ProvidersConfig>): OpenAIEmbedder | GeminiEmbedder | undefined {
  const config = ctx.config.embedder;
  if (!config) return undefined;
  try {
    checkBaseURL(config.baseURL, 'plugins/providers/config/embedder');
    const key = resolveKey(config, 'plugins/providers/config/embedder').key;
    return config.provider === 'gemini' ? new GeminiEmbedder(config, key) : new OpenAIEmbedder(config, key);
  } catch (error) {
    // Semantic search reports itself unavailable, with this reason (at start, and at each call).
    decline(ctx, 'embedder', config.provider, error);
    return undefined;
  }
}

function rerankerFrom(ctx: PluginContext<ProvidersConfig>): HttpReranker | undefined {
  const config = ctx.config.reranker;
  if (!config) return undefined;
  try {
    checkBaseURL(config.baseURL, 'plugins/providers/config/reranker');
    return new HttpReranker(config, rerankerKey(config));
  } catch (error) {
    // Reranking reports itself unavailable, with this reason, and searches keep their fused order.
    decline(ctx, 'reranker', 'http', error);
    return undefined;
  }
}

/** A backend that cannot be made: logged once, and said by a selection naming it (the message names the variable, never a key). */
function decline(ctx: PluginContext<ProvidersConfig>, kind: 'embedder' | 'reranker', name: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  ctx.log.warn(`${kind} unavailable`, { reason: message });
  const field = error instanceof KernelError ? error.details.field : undefined;
  ctx.declineBackend(kind, name, { message, ...(typeof field === 'string' ? { field } : {}) });
}

export default definePlugin<ProvidersConfig>({
  activate(ctx) {
    const model = modelFrom(ctx.config.model);
    if (model instanceof UnavailableModel && ctx.config.model) ctx.log.warn('model unavailable', { provider: ctx.config.model.provider, reason: model.reason.message });
    ctx.provide('agent.model', model);
    // Offered to search-semantic (plugins.search-semantic.config.embedder: "providers").
    const embedder = embedderFrom(ctx);
    if (embedder) ctx.provideBackend('embedder', embedder.id, embedder);
    // Offered to rerank (plugins.rerank.config.reranker: "providers").
    const reranker = rerankerFrom(ctx);
    if (reranker) ctx.provideBackend('reranker', 'http', reranker);
    return {};
  },
});
