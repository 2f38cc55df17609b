import type { Logger } from '../log.js';

/** After start (not during it: a listing per document or skill) and then daily. */
const FIRST_SWEEP_MS = 30_000;
const SWEEP_EVERY_MS = 86_400_000;

/**
 * Applies retention rules to everything kept, in the background, after start and then daily:
 * `prune(now, stopped)` walks what is kept, asking `stopped` between items. Rules applied only when
 * the same item was written again let a removed note's or skill's versions outlive their age for ever.
 * Returns the stop: no new sweep, and the one running stops at its next item and is waited for.
 */
export function sweepRetention(prune: (now: Date, stopped: () => boolean) => Promise<unknown>, log: Pick<Logger, 'warn'>, what: string): () => Promise<void> {
  let closing = false;
  let running: Promise<void> = Promise.resolve();
  const sweep = (): void => {
    running = running.then(async () => {
      if (closing) return;
      try {
        await prune(new Date(), () => closing);
      } catch (error) {
        log.warn(`${what}: applying the retention rules failed; tried again tomorrow`, { error: (error as Error).message });
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
