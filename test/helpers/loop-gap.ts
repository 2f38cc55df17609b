import { performance } from 'node:perf_hooks';

/**
 * Runs `work` while a 10 ms interval timer notes the longest time between two of its callbacks (from
 * the start): how long the event loop was held at once, at worst. monitorEventLoopDelay measures from
 * its own first tick, so a stall that begins before that tick (work started right after enable(), as
 * these tests do) goes unrecorded: it reported 13 ms for a 1.5 s stall that this timer saw.
 */
export async function measured<T>(work: () => Promise<T>): Promise<{ value: T; maxDelayMs: number }> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    const value = await work();
    // A stall at the very end of the work shows only once the timer has run after it.
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { value, maxDelayMs: longest };
  } finally {
    clearInterval(timer);
  }
}
