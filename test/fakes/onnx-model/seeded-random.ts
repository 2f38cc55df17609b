// Deterministic weights: the same seed gives the same model bytes on every machine, so vectors in tests
// can be compared across runs.

import { seededUniform } from '../../../fakes/seeded-random.js';

export { seededUniform };

/** Normally distributed values (Box-Muller) with the given standard deviation. */
export function seededNormal(seed: number): (std: number) => number {
  const uniform = seededUniform(seed);
  return (std) => {
    const u1 = Math.max(uniform(), Number.EPSILON);
    const u2 = uniform();
    return std * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
}
