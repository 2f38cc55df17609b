import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest } from '../../core/turn/model-provider.js';
import { limitsOf, type ModelConfig } from './config.js';
import type { NativeOrigin } from './conversation.js';
import { toModelError } from './errors.js';
import { ModelCheck } from './model-check.js';

/**
 * What every provider shares: its config's limits, the one-time check that its model exists, the
 * origin its replayed state is tied to, and errors mapped once with the key kept out of them.
 */
export abstract class ConfiguredProvider implements ModelProvider {
  readonly limits: ModelProvider['limits'];
  private check: ModelCheck | undefined;
  private endpoint = '';
  private keySource = '';

  protected constructor(readonly id: string, protected readonly config: ModelConfig) {
    this.limits = limitsOf(config);
  }

  get model(): string {
    return this.config.model;
  }

  /** Called by the subclass once its client exists. */
  protected connectedTo(baseURL: string, keySource: string, lookup: (signal: AbortSignal) => Promise<boolean | undefined>): void {
    this.endpoint = baseURL;
    this.keySource = keySource;
    this.check = new ModelCheck({ provider: this.id, model: this.config.model, baseURL, keySource }, lookup);
  }

  /** Stored with the provider's state, and required to match before it is replayed. */
  protected get origin(): NativeOrigin {
    return { protocol: this.id, model: this.config.model, baseURL: this.endpoint };
  }

  /**
   * The SDK's error as a ModelError. A refused key is described without the server's words: some
   * servers echo part of the key back.
   */
  protected failure(error: unknown): ModelError {
    const mapped = toModelError(error);
    if (mapped.category !== 'authentication') return mapped;
    return new ModelError('authentication', `${this.id} at ${this.endpoint} refused the key from ${this.keySource}`);
  }

  prepare(signal: AbortSignal): Promise<void> {
    return this.check ? this.check.ensure(signal) : Promise.resolve();
  }

  abstract stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}
