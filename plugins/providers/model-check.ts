import { KernelError } from '../../core/index.js';
import { NO_KEY_SOURCE } from './config.js';
import { toModelError } from './errors.js';

export interface CheckTarget {
  provider: string;
  model: string;
  baseURL: string;
  keySource: string;
}

/**
 * Asks the server once whether it offers the configured model, so that a typo in quire.json is a clear
 * error before the first turn rather than a failed request inside it. `lookup` answers true (offered),
 * false (not offered) or undefined (this server cannot tell: the turn goes ahead). A refused key is
 * reported naming the variable it came from. An answer is remembered; a refusal is asked again.
 */
export class ModelCheck {
  private passed = false;

  constructor(private readonly target: CheckTarget, private readonly lookup: (signal: AbortSignal) => Promise<boolean | undefined>) {}

  async ensure(signal: AbortSignal): Promise<void> {
    if (this.passed) return;
    const { provider, model, baseURL, keySource } = this.target;
    let offered: boolean | undefined;
    try {
      offered = await this.lookup(signal);
    } catch (error) {
      // The server's own words are left out: some echo part of the key back.
      if (toModelError(error).category === 'authentication') {
        throw new KernelError('MODEL_UNAVAILABLE', `${provider} at ${baseURL} ${refusal(keySource)} (HTTP ${statusOf(error) ?? 'error'})`, { details: { provider, baseURL } });
      }
      return;
    }
    if (offered === false) {
      throw new KernelError('MODEL_UNAVAILABLE', `${provider} at ${baseURL} does not offer the model '${model}' (plugins.providers.config.model.model)`, { details: { field: 'plugins/providers/config/model/model', model, provider } });
    }
    // "Cannot tell" is remembered too: asking again each turn would learn nothing new.
    this.passed = true;
  }
}

/** The HTTP status of an SDK error, when it has one. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * A lookup for servers that answer one model by id. A 404 that names the model means it is not offered;
 * a 404 that does not (a proxy without that route) cannot tell.
 */
export function lookupById(model: string, fetchOne: (signal: AbortSignal) => Promise<unknown>): (signal: AbortSignal) => Promise<boolean | undefined> {
  return async (signal) => {
    try {
      await fetchOne(signal);
      return true;
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      // The vendor's own not-found answer names the model; a proxy's page for a missing route does not
      // say not_found_error / NOT_FOUND, even when it echoes the path.
      const text = `${String((error as { message?: unknown }).message ?? '')} ${JSON.stringify((error as { error?: unknown }).error ?? null)}`;
      return text.includes(model) && /not_found_error|NOT_FOUND/.test(text) ? false : undefined;
    }
  };
}

/** What a server's refusal of the credentials says: the key and where it came from, or that none was sent. */
export function refusal(keySource: string): string {
  return keySource === NO_KEY_SOURCE ? 'refused the request, sent without a key (apiKeyEnv is false): if it needs one, name the variable that holds it in apiKeyEnv' : `refused the key from ${keySource}`;
}
