import { randomInt } from 'node:crypto';

const ID_PATTERN = /^\d{14}-[0-9a-z]{7}$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Ids handed out in the current second. Seven random base-36 characters make a clash rare but not
 * negligible for a large import (tens of thousands of ids in one second), so this process never repeats one.
 */
let issuedSecond = '';
const issued = new Set<string>();

/** A sortable id carrying its creation time: `YYYYMMDDhhmmss-xxxxxxx` (UTC, 7 base-36 characters). */
export function newId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  if (stamp !== issuedSecond) {
    issuedSecond = stamp;
    issued.clear();
  }
  for (;;) {
    let suffix = '';
    for (let i = 0; i < 7; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
    const id = `${stamp}-${suffix}`;
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
