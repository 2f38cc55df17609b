import { describe, expect, it } from 'vitest';
import { RefusalWindow } from '../../../core/pipeline/refusal-window.js';

describe('the refusals the audit writes', () => {
  it('admits the first of a key in a window, and writes those left out as one count when the window ends', async () => {
    const flushed: [string, number][] = [];
    const window = new RefusalWindow<string>((last, left) => flushed.push([last, left]), 50);
    // One time for all four: a pause between them (a GC) could have passed the 50 ms window.
    const now = Date.now();
    expect(window.admit('reader put', now, 'first')).toBe(true);
    expect(['second', 'third', 'fourth'].map((request) => window.admit('reader put', now, request))).toEqual([false, false, false]);
    expect(window.admit('reader delete', now, 'other')).toBe(true);
    expect(flushed).toEqual([]);
    for (let waited = 0; flushed.length === 0 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(flushed).toEqual([['fourth', 3]]);
    // The window over, the next is written again.
    expect(window.admit('reader put', Date.now(), 'fifth')).toBe(true);
  });

  it('remembers at most a thousand keys, writing the count of one it forgets', () => {
    const flushed: [string, number][] = [];
    const window = new RefusalWindow<string>((last, left) => flushed.push([last, left]));
    expect(window.admit('key 0', 0, 'a')).toBe(true);
    expect(window.admit('key 0', 1, 'b')).toBe(false);
    for (let i = 1; i <= 1_000; i++) window.admit(`key ${i}`, 2, 'x');
    expect(flushed).toEqual([['b', 1]]);
    expect(window.admit('key 0', 3, 'c')).toBe(true);
  });
});
