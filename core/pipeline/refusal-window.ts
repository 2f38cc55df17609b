/** How long one refusal line stands for the same caller, action and reason. */
const WINDOW_MS = 60_000;
/** Keys remembered at most (the oldest forgotten first): the memory of a flood stays bounded too. */
const MAX_KEYS = 1_000;

/**
 * Which refusals the audit writes: the first of a key (caller, action, reason) in a minute, the next
 * after the minute carrying how many were left out. Bounded in keys and so in lines per minute.
 */
export class RefusalWindow {
  private readonly seen = new Map<string, { since: number; left: number }>();

  /** The count of refusals left out since the last line of this key, when one is to be written now; undefined when this one is left out. */
  admit(key: string, now: number): number | undefined {
    const last = this.seen.get(key);
    if (last && now - last.since < WINDOW_MS) {
      last.left++;
      return undefined;
    }
    const left = last?.left ?? 0;
    this.seen.delete(key);
    this.seen.set(key, { since: now, left: 0 });
    if (this.seen.size > MAX_KEYS) this.seen.delete(this.seen.keys().next().value!);
    return left;
  }
}
