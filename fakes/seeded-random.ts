/**
 * mulberry32: a small deterministic 32-bit generator, numbers in [0, 1). The same seed gives the same
 * sequence on every machine: generated test models, random test inputs, and benchmarks whose failing
 * run is repeated with its printed seed.
 */
export function seededUniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
