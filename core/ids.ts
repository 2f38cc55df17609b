import { randomBytes } from 'node:crypto';

const ID_PATTERN = /^\d{14}-[0-9a-z]{7}$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Ids handed out in the current second. Seven random base-36 characters make a clash rare but not
 * negligible for a large import (tens of thousands of ids in one second), so this process never repeats one.
 */
let issuedSecond = '';
let issuedAtMs = -1;
let issued = new Set<string>();

/**
 * Ids made on other threads (an import's workers) and claimed here, by second, for the last
 * CLAIM_SECONDS seconds: two workers may make the same id, or one this thread makes.
 */
const CLAIM_SECONDS = 30;
const claimed = new Map<string, Set<string>>();
/** The newest second no longer kept: an id of that second or before cannot be checked any more. */
let forgottenUpTo = '';

function keep(stamp: string, set: Set<string>): void {
  claimed.set(stamp, set);
  if (claimed.size > CLAIM_SECONDS) {
    const oldest = [...claimed.keys()].sort()[0]!;
    claimed.delete(oldest);
    if (oldest > forgottenUpTo) forgottenUpTo = oldest;
  }
}

function issuedIn(stamp: string): Set<string> {
  if (stamp === issuedSecond) return issued;
  let set = claimed.get(stamp);
  if (!set) {
    set = new Set();
    keep(stamp, set);
  }
  return set;
}

/**
 * Random bytes drawn a few kilobytes at a time: one randomInt per character (seven per id) cost more
 * than the rest of an import's id work. A byte of 252 or more is skipped so that each of the 36
 * characters stays equally likely (252 = 7 × 36).
 */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolAt = 0;

function randomChar(): string {
  for (;;) {
    if (poolAt === POOL_SIZE) {
      pool = randomBytes(POOL_SIZE);
      poolAt = 0;
    }
    const byte = pool[poolAt++]!;
    if (byte < 252) return ALPHABET[byte % 36]!;
  }
}

/** The `YYYYMMDDhhmmss` of a time, worked out once per second rather than once per id. */
function stampOf(now: Date): string {
  const ms = now.getTime();
  if (issuedAtMs !== -1 && Math.floor(ms / 1000) === Math.floor(issuedAtMs / 1000)) return issuedSecond;
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** A sortable id carrying its creation time: `YYYYMMDDhhmmss-xxxxxxx` (UTC, 7 base-36 characters). */
export function newId(now: Date = new Date()): string {
  const stamp = stampOf(now);
  if (stamp !== issuedSecond) {
    // The second's ids stay checkable for ids claimed later from other threads.
    if (issuedSecond !== '' && issued.size > 0) keep(issuedSecond, issued);
    issuedSecond = stamp;
    issued = claimed.get(stamp) ?? new Set();
    claimed.delete(stamp);
  }
  issuedAtMs = now.getTime();
  for (;;) {
    const id = `${stamp}-${randomChar()}${randomChar()}${randomChar()}${randomChar()}${randomChar()}${randomChar()}${randomChar()}`;
    if (!issued.has(id)) {
      issued.add(id);
      return id;
    }
  }
}

/**
 * Takes ids made by newId on another thread of this process as issued here, all or none: false (and
 * nothing recorded) when one was issued or claimed already, or is among themselves twice, or is older
 * than this process can still check; the caller then makes new ones here.
 */
export function claimIds(ids: readonly string[]): boolean {
  // Added as they are checked (one set operation each; the ids of a chunk share a second or two),
  // and taken out again if one is refused.
  let stamp = '';
  let set: Set<string> | undefined;
  let added = 0;
  for (; added < ids.length; added++) {
    const id = ids[added]!;
    if (!id.startsWith(stamp) || set === undefined) {
      stamp = id.slice(0, 14);
      if (stamp <= forgottenUpTo) break;
      set = issuedIn(stamp);
    }
    if (set.has(id)) break;
    set.add(id);
  }
  if (added === ids.length) return true;
  for (let i = 0; i < added; i++) issuedIn(ids[i]!.slice(0, 14)).delete(ids[i]!);
  return false;
}

/** Every id that reaches a file path must pass this first. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}
