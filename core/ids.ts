import { randomBytes } from 'node:crypto';

const ID_PATTERN = /^\d{14}-[0-9a-z]{7}$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Ids handed out in the current second. Seven random base-36 characters make a clash rare but not
 * negligible for a large import (tens of thousands of ids in one second), so this process never repeats one.
 */
let issuedSecond = '';
let issuedAtMs = -1;
const issued = new Set<string>();

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
    issuedSecond = stamp;
    issued.clear();
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

/** Every id that reaches a file path must pass this first. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}
