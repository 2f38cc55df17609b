/** How long one refusal line stands for the same caller, action and reason. */
const WINDOW_MS = 60_000;
/** Keys remembered at most (the oldest forgotten first): the memory of a flood stays bounded too. */
const MAX_KEYS = 1_000;

interface Seen<T> { since: number; left: number; last: T; timer: NodeJS.Timeout | undefined }

/**
 * Which refusals the audit writes: the first of a key (caller, action, reason) in a minute; those left
 * out are counted and written as one line (`flush`) when the minute ends, or when the key is forgotten.
 * Bounded in keys, timers and lines per minute.
 */
export class RefusalWindow<T> {
  private readonly seen = new Map<string, Seen<T>>();

  constructor(private readonly flush: (last: T, left: number) => void, private readonly windowMs = WINDOW_MS) {}

  /** Whether this refusal is to be written now; otherwise it is counted, for the line at the minute's end. */
  admit(key: string, now: number, request: T): boolean {
    const known = this.seen.get(key);
    if (known && now - known.since < this.windowMs) {
      known.left++;
      known.last = request;
      known.timer ??= this.timer(key, known.since + this.windowMs - now);
      return false;
    }
    if (known) this.forget(key, known);
    this.seen.set(key, { since: now, left: 0, last: request, timer: undefined });
    if (this.seen.size > MAX_KEYS) {
      const [oldest, entry] = this.seen.entries().next().value!;
      this.forget(oldest, entry);
    }
    return true;
  }

  private timer(key: string, delay: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const entry = this.seen.get(key);
      if (entry) this.forget(key, entry);
    }, Math.max(0, delay));
    timer.unref();
    return timer;
  }

  /** The key's count written if any, and the key gone. */
  private forget(key: string, entry: Seen<T>): void {
    clearTimeout(entry.timer);
    this.seen.delete(key);
    if (entry.left > 0) this.flush(entry.last, entry.left);
  }
}
