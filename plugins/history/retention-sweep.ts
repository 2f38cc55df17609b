import type { HistoryStore } from './history-store.js';

interface Log {
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** After start (not during it: a listing per document) and then daily. */
const FIRST_SWEEP_MS = 30_000;
const SWEEP_EVERY_MS = 86_400_000;

/**
 * Applies the retention rules to every document's history in the background, after start and then
 * daily: they were applied only when a document was written again, so a removed note's versions (its
 * text) outlived `maxAgeDays` for ever. Returns the stop: no new sweep, and the one running stops at
 * its next document and is waited for.
 */
export function sweepRetention(history: HistoryStore, log: Log): () => Promise<void> {
  let closing = false;
  let running: Promise<void> = Promise.resolve();
  const sweep = (): void => {
    running = running.then(async () => {
      if (closing) return;
      try {
        await history.pruneAll(new Date(), () => closing);
      } catch (error) {
        log.warn('history: applying the retention rules failed; tried again tomorrow', { error: (error as Error).message });
      }
    });
  };
  const first = setTimeout(sweep, FIRST_SWEEP_MS);
  const daily = setInterval(sweep, SWEEP_EVERY_MS);
  first.unref();
  daily.unref();
  return async () => {
    closing = true;
    clearTimeout(first);
    clearInterval(daily);
    await running;
  };
}
