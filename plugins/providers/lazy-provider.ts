import type { ModelEvent, ModelProvider, ModelRequest } from '../../core/turn/model-provider.js';
import { limitsOf, type ModelConfig, type Protocol, type ResolvedKey } from './config.js';

type ProviderClass = new (config: ModelConfig, key: ResolvedKey) => ModelProvider;

/**
 * Each protocol's module, imported only when its provider is first used: the vendors' SDKs take
 * 100-300 ms to load (hundreds of files each), which `quire serve` would otherwise pay at every start
 * whether or not a turn ever runs.
 */
const MODULES: Readonly<Record<Protocol, () => Promise<ProviderClass>>> = {
  'openai-chat': async () => (await import('./openai-chat.js')).OpenAIChatProvider,
  'openai-responses': async () => (await import('./openai-responses.js')).OpenAIResponsesProvider,
  anthropic: async () => (await import('./anthropic.js')).AnthropicProvider,
  gemini: async () => (await import('./gemini.js')).GeminiProvider,
};

/**
 * The configured provider, its SDK loaded on the first check or turn. What is known from the config
 * alone (id, model, limits) answers at once; everything else waits for the real provider.
 */
export class LazyProvider implements ModelProvider {
  readonly id: string;
  readonly entry: string | undefined;
  readonly model: string;
  readonly limits: ModelProvider['limits'];
  private loading: Promise<ModelProvider> | undefined;

  constructor(private readonly config: ModelConfig, private readonly key: ResolvedKey) {
    this.id = config.provider;
    this.entry = config.local === true ? 'local' : undefined;
    this.model = config.model;
    this.limits = limitsOf(config);
  }

  /** The real provider; a failed import is tried again by the next caller. */
  private provider(): Promise<ModelProvider> {
    this.loading ??= MODULES[this.config.provider]().then(
      (Provider) => new Provider(this.config, this.key),
      (error: unknown) => { this.loading = undefined; throw error; },
    );
    return this.loading;
  }

  async prepare(signal: AbortSignal): Promise<void> {
    const provider = await this.provider();
    await provider.prepare?.(signal);
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    yield* (await this.provider()).stream(request, signal);
  }
}
