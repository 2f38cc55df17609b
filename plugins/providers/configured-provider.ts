import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest } from '../../core/turn/model-provider.js';
import { limitsOf, type ModelConfig } from './config.js';
import type { NativeOrigin } from './conversation.js';
import { withoutKey } from './errors.js';
import { ModelCheck, refusal } from './model-check.js';

const MAX_ERROR_TEXT = 500;

/**
 * What every provider shares: its config's limits, the one-time check that its model exists, the
 * origin its replayed state is tied to, and errors mapped once with the key kept out of them.
 */
export abstract class ConfiguredProvider implements ModelProvider {
  readonly limits: ModelProvider['limits'];
  private check: ModelCheck | undefined;
  private endpoint = '';
  private keySource = '';
  private key = '';

  protected constructor(readonly id: string, protected readonly config: ModelConfig) {
    this.limits = limitsOf(config);
  }

  get model(): string {
    return this.config.model;
  }

  /** Called by the subclass once its client exists. */
  protected connectedTo(baseURL: string, key: { key: string; source: string }, lookup: (signal: AbortSignal) => Promise<boolean | undefined>): void {
    this.endpoint = baseURL;
    this.keySource = key.source;
    this.key = key.key;
    this.check = new ModelCheck({ provider: this.id, model: this.config.model, baseURL, keySource: key.source }, lookup);
  }

  /** Stored with the provider's state, and required to match before it is replayed. */
  protected get origin(): NativeOrigin {
    return { protocol: this.id, model: this.config.model, baseURL: this.endpoint };
  }

  /**
   * The SDK's error as a ModelError. A refused key is described without the server's words: some
   * servers echo part of the key back. Any other server text goes to the turn's events, the session
   * and the log: the key is masked in it (a proxy may echo it) and it is cut at 500 characters (a
   * compatible server's validation error may echo the request: notes, tool results).
   */
  protected failure(error: unknown): ModelError {
    const mapped = withoutKey(error, this.key, this.endpoint);
    if (mapped.category === 'authentication') return new ModelError('authentication', `${this.id} at ${this.endpoint} ${refusal(this.keySource)}`);
    // Which server could not be reached: "Connection error." alone (the turn's error event, the web app) left the person to guess.
    if (mapped.category === 'network') return new ModelError('network', `${this.id} at ${shownEndpoint(this.endpoint)} cannot be reached: ${mapped.message.slice(0, MAX_ERROR_TEXT)}`, mapped.retryAfterMs);
    if (mapped.message.length <= MAX_ERROR_TEXT) return mapped;
    return new ModelError(mapped.category, `${mapped.message.slice(0, MAX_ERROR_TEXT)}… (cut at ${MAX_ERROR_TEXT} characters)`, mapped.retryAfterMs);
  }

  prepare(signal: AbortSignal): Promise<void> {
    return this.check ? this.check.ensure(signal) : Promise.resolve();
  }

  abstract stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

/** A server's address as said in an error: its user, password and query left out (they may hold a key). */
function shownEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(the configured baseURL)';
  }
}
