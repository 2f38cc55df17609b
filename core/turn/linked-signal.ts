/**
 * An AbortController that also aborts when `parent` does, and that can be unlinked again. A turn's one
 * signal is shared by hundreds of rounds and waits: each must remove its listener when it is done, which
 * AbortSignal.any does not offer.
 */
export function linkedController(parent: AbortSignal, timeoutMs?: number): { signal: AbortSignal; abort(reason?: unknown): void; unlink(): void } {
  const controller = new AbortController();
  const onParent = (): void => controller.abort(parent.reason);
  let timer: NodeJS.Timeout | undefined;
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  if (timeoutMs !== undefined) timer = setTimeout(() => controller.abort(new Error('timed out')), timeoutMs);
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    unlink: () => {
      parent.removeEventListener('abort', onParent);
      clearTimeout(timer);
    },
  };
}
