// Deterministic weights: the same seed gives the same model bytes on every machine, so vectors in tests
// can be compared across runs.

/** mulberry32: a small 32-bit generator, good enough for random weights. Returns numbers in [0, 1). */
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

/** Normally distributed values (Box-Muller) with the given standard deviation. */
export function seededNormal(seed: number): (std: number) => number {
  const uniform = seededUniform(seed);
  return (std) => {
    const u1 = Math.max(uniform(), Number.EPSILON);
    const u2 = uniform();
    return std * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
}
