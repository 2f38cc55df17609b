import type { ModelEvent, ModelProvider, ModelRequest } from '../../core/turn/model-provider.js';
import { limitsOf, type ModelConfig } from './config.js';
import { ModelCheck } from './model-check.js';

/** What every provider shares: its config's limits, and the one-time check that its model exists. */
export abstract class ConfiguredProvider implements ModelProvider {
  readonly limits: ModelProvider['limits'];
  private check: ModelCheck | undefined;

  protected constructor(readonly id: string, protected readonly config: ModelConfig) {
    this.limits = limitsOf(config);
  }

  /** Called by the subclass once its client exists. */
  protected checkModelWith(baseURL: string, keySource: string, lookup: (signal: AbortSignal) => Promise<boolean | undefined>): void {
    this.check = new ModelCheck({ provider: this.id, model: this.config.model, baseURL, keySource }, lookup);
  }

  prepare(signal: AbortSignal): Promise<void> {
    return this.check ? this.check.ensure(signal) : Promise.resolve();
  }

  abstract stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}
