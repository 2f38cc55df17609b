import { describe, expect, it } from 'vitest';
import { isValidId, newId } from '../../core/ids.js';

describe('ids', () => {
  it('carry their creation time and sort by it', () => {
    const early = newId(new Date('2026-01-02T03:04:05Z'));
    const late = newId(new Date('2026-01-02T03:04:06Z'));
    expect(early).toMatch(/^20260102030405-[0-9a-z]{7}$/);
    expect([late, early].sort()).toEqual([early, late]);
  });

  it('reject anything that could escape a path', () => {
    expect(isValidId(newId())).toBe(true);
    for (const bad of ['../20260102030405-abcdefg', '20260102030405-ABCDEFG', '20260102030405-abcdef', '20260102030405-abcdefg/x', '', 42, null]) {
      expect(isValidId(bad)).toBe(false);
    }
  });

  it('never repeats an id within a second, however many are made', () => {
    const now = new Date('2026-01-02T03:04:05Z');
    const ids = new Set<string>();
    for (let i = 0; i < 300_000; i++) ids.add(newId(now));
    expect(ids.size).toBe(300_000);
  });

  it('use every one of the 36 characters about equally, and follow the clock from one second to the next', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 36_000; i++) for (const char of newId().slice(15)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(36);
    // 7,000 draws of each expected; a bias from the byte-to-character mapping would be 10% and more.
    for (const count of counts.values()) expect(Math.abs(count - 7_000)).toBeLessThan(700);
    expect(newId(new Date('2026-01-02T03:04:05.999Z')).slice(0, 14)).toBe('20260102030405');
    expect(newId(new Date('2026-01-02T03:04:06.000Z')).slice(0, 14)).toBe('20260102030406');
    expect(newId(new Date('2026-01-02T03:04:05.500Z')).slice(0, 14)).toBe('20260102030405');
  });
});
