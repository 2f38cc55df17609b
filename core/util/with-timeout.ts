/**
 * Runs `work` with a signal that aborts at the time limit (with `late()`'s error) or with the caller's,
 * and stops waiting then even if `work` ignores its signal (a local model mid-inference); what it does
 * after that is not waited for, and its late failure is not unhandled.
 */
export async function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, timeoutMs: number, outer: AbortSignal | undefined, late: () => Error): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(late()), timeoutMs);
  const onOuter = () => controller.abort(outer!.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  try {
    const stopped = new Promise<never>((_, reject) => {
      if (controller.signal.aborted) reject(controller.signal.reason);
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    stopped.catch(() => undefined);
    const working = Promise.resolve().then(() => work(controller.signal));
    working.catch(() => undefined);
    return await Promise.race([working, stopped]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
  }
}
