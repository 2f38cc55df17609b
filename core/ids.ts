import { randomInt } from 'node:crypto';

const ID_PATTERN = /^\d{14}-[0-9a-z]{7}$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A sortable id carrying its creation time: `YYYYMMDDhhmmss-xxxxxxx` (UTC, 7 base-36 characters). */
export function newId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  let suffix = '';
  for (let i = 0; i < 7; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `${stamp}-${suffix}`;
}

/** Every id that reaches a file path must pass this first. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}
