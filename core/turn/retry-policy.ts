import { ModelError, type ModelErrorCategory } from './model-provider.js';

export interface RetrySettings {
  /** Attempts after the first, for the categories worth retrying. */
  maxRetries: number;
  /** The first backoff; each later one doubles, up to maxDelayMs (REFERENCE: 1 s doubling to 64 s). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A network error waits this long instead. */
  networkDelayMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { maxRetries: 5, baseDelayMs: 1_000, maxDelayMs: 64_000, networkDelayMs: 3_000 };

const RETRIED: ReadonlySet<ModelErrorCategory> = new Set(['rate_limit', 'server', 'timeout', 'network']);

/** The code a turn's error event gives a failed model request: MODEL_<CATEGORY>, or BUDGET_EXCEEDED. */
export function errorCodeOf(error: unknown): string {
  const category = categoryOf(error);
  return category === 'budget_exceeded' ? 'BUDGET_EXCEEDED' : `MODEL_${category.toUpperCase()}`;
}

export function categoryOf(error: unknown): ModelErrorCategory | 'unknown' {
  return error instanceof ModelError ? error.category : 'unknown';
}

/**
 * How long to wait before attempt `attempt` (1-based) after this error, or undefined when it must not be
 * retried. A server's retry-after is honoured up to the cap; otherwise exponential with ±20% jitter, capped.
 */
export function retryDelay(error: unknown, attempt: number, settings: RetrySettings, random: () => number = Math.random): number | undefined {
  const category = categoryOf(error);
  if (category === 'unknown' || !RETRIED.has(category) || attempt > settings.maxRetries) return undefined;
  if (category === 'network') return settings.networkDelayMs;
  // A server that says when to come back knows best; our ceiling still bounds it.
  const asked = error instanceof ModelError ? error.retryAfterMs : undefined;
  if (asked !== undefined) return Math.round(Math.min(settings.maxDelayMs, Math.max(0, asked)));
  const exponential = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(Math.min(settings.maxDelayMs, exponential * (0.8 + 0.4 * random())));
}

/** Waits `ms`, or less when the signal aborts (the caller checks the signal after). */
export function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
}
