import type { LogFields, Logger } from '../log.js';

/** Lines a second one plugin's process may write to the kernel's log (its log calls and its output together). */
const LINES_PER_SECOND = 100;
/** Lines it may write at once before the rate applies. */
const BURST = 200;
/** A log record's fields, as JSON, at most this many characters; larger ones are replaced by their size. */
const MAX_FIELDS_CHARS = 8_192;

/**
 * A token bucket for what a plugin in a process of its own writes to the kernel's log: a plugin that
 * logged in a loop filled the kernel's log (and its disk) as fast as its pipe carried messages, each
 * with fields of any size up to a 64 MiB frame. Lines over the rate are dropped and counted; the count
 * is said once lines pass again, or when the process ends.
 */
export class LogBudget {
  private tokens = BURST;
  private last: number;
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly log: Logger, private readonly now: () => number = Date.now) {
    this.last = now();
  }

  /** Whether one more line may be written now. */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.last) / 1000) * LINES_PER_SECOND);
    this.last = now;
    if (this.tokens < 1) {
      this.dropped += 1;
      // Said within a second even when nothing passes again (the flood was the last of it).
      this.timer ??= setTimeout(() => this.flush(), 1_000).unref();
      return false;
    }
    this.tokens -= 1;
    this.flush();
    return true;
  }

  /** Says how many lines were dropped since it last said so, if any. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dropped === 0) return;
    this.log.warn('plugin log lines dropped', { dropped: this.dropped, limit: `${LINES_PER_SECOND} lines a second` });
    this.dropped = 0;
  }
}

/** A record's fields, or their size in their place when they are too large to write. */
export function boundedFields(fields: unknown): LogFields | undefined {
  if (fields === null || typeof fields !== 'object') return undefined;
  let size: number;
  try {
    size = JSON.stringify(fields).length;
  } catch {
    return { fieldsOmitted: 'they cannot be written as JSON' };
  }
  return size <= MAX_FIELDS_CHARS ? fields as LogFields : { fieldsOmitted: `${size} characters of fields, over ${MAX_FIELDS_CHARS}` };
}
