import { describe, expect, it } from 'vitest';
import { RefusalWindow } from '../../../core/pipeline/refusal-window.js';

describe('the refusals the audit writes', () => {
  it('admits the first of a key in a minute, and the next after it with how many were left out', () => {
    const window = new RefusalWindow();
    expect(window.admit('reader\u0000note_put', 0)).toBe(0);
    expect([1_000, 2_000, 59_999].map((at) => window.admit('reader\u0000note_put', at))).toEqual([undefined, undefined, undefined]);
    expect(window.admit('reader\u0000note_delete', 30_000)).toBe(0);
    expect(window.admit('reader\u0000note_put', 60_000)).toBe(3);
    expect(window.admit('reader\u0000note_put', 60_001)).toBeUndefined();
  });

  it('remembers at most a thousand keys, the oldest forgotten first', () => {
    const window = new RefusalWindow();
    for (let i = 0; i <= 1_000; i++) expect(window.admit(`key ${i}`, 0)).toBe(0);
    expect(window.admit('key 0', 1)).toBe(0);
    expect(window.admit('key 1000', 1)).toBeUndefined();
  });
});
