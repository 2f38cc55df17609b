import { describe, expect, it } from 'vitest';
import { VectorSize } from '../../../plugins/providers/vector-size.js';

const answer = (size: number, count = 2): Float32Array[] => Array.from({ length: count }, () => new Float32Array(size));
const outcome = (size: VectorSize, vectors: Float32Array[], now: number): string => {
  try {
    size.take(vectors, now);
    return `ok ${size.value}`;
  } catch {
    return `refused ${size.value}`;
  }
};

describe('an embedder\'s vector size', () => {
  it('follows a server that answers a new size in three answers in a row, never one alternating two sizes, and waits ten minutes after a change, doubled at each', () => {
    const size = new VectorSize(undefined, 'the embedder');
    expect(outcome(size, answer(8), 0)).toBe('ok 8');
    // Alternating: every answer of the other size fails (each had every block embedded again, without end).
    expect([16, 8, 16, 8, 16, 16, 8].map((n) => outcome(size, answer(n), 1000))).toEqual(['refused 8', 'ok 8', 'refused 8', 'ok 8', 'refused 8', 'refused 8', 'ok 8']);
    // A model swapped for good: taken on at its third answer in a row.
    expect([16, 16, 16, 16].map((n) => outcome(size, answer(n), 2000))).toEqual(['refused 8', 'refused 8', 'ok 16', 'ok 16']);
    // Swapped back within ten minutes: refused however long it lasts, then followed.
    expect([8, 8, 8, 8].map((n) => outcome(size, answer(n), 2000 + 60_000))).toEqual(['refused 16', 'refused 16', 'refused 16', 'refused 16']);
    expect(outcome(size, answer(8), 2000 + 10 * 60_000)).toBe('ok 8');
    // Each change doubles the wait for the next (a server answering two sizes at random changed six times an hour).
    const later = 2000 + 10 * 60_000;
    expect([16, 16, 16].map((n) => outcome(size, answer(n), later + 19 * 60_000))).toEqual(['refused 8', 'refused 8', 'refused 8']);
    expect(outcome(size, answer(16), later + 20 * 60_000)).toBe('ok 16');
  });

  it('holds to a configured size, and refuses an answer of two sizes', () => {
    const size = new VectorSize(3, 'Gemini');
    expect([4, 4, 4].map((n) => outcome(size, answer(n), 0))).toEqual(['refused 3', 'refused 3', 'refused 3']);
    expect(() => new VectorSize(undefined, 'x').take([new Float32Array(4), new Float32Array(5)])).toThrow('a vector of 5 dimensions for text 1, 4 for text 0 of the same answer');
  });
});
