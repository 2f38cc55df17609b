/**
 * Synthetic embedding-like vectors for bench/semantic-ann.ts: seeded, low rank plus noise, normalised.
 * Each vector is a topic centre (one of TOPICS in a RANK-dimensional latent space) plus a latent spread,
 * projected to the full width by a fixed random basis, plus isotropic noise, then L2-normalised: nearest
 * neighbours are mostly within a topic, as with sentence embeddings, and the spectrum decays instead of
 * being flat (uniformly random vectors are the hardest case for HNSW and unlike real embeddings).
 * Cached as a raw little-endian float32 file, since generating 1M × 384 takes tens of seconds.
 */
import { existsSync, mkdirSync, openSync, readSync, closeSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export const RANK = 48;
export const TOPICS = 2000;
const SPREAD = 0.6;
/** Norm of the isotropic noise, against a signal of norm about 3.5. */
const NOISE = 1;

/** xorshift-style generator with a Gaussian draw (Box–Muller); deterministic for a seed. */
export function gaussianSource(seed: number): () => number {
  let state = (seed ^ 0x9e3779b9) >>> 0 || 1;
  const uniform = (): number => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return (state + 0.5) / 4294967296;
  };
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(uniform()));
    const angle = 2 * Math.PI * uniform();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}

/** The shared structure of a corpus: the latent basis and the topic centres. */
export class EmbeddingSpace {
  private readonly basis: Float32Array; // RANK rows of `dimensions`
  private readonly centres: Float32Array; // TOPICS rows of RANK
  private readonly scales: Float32Array; // decaying spectrum of the latent axes

  constructor(readonly dimensions: number, seed: number) {
    const next = gaussianSource(seed);
    this.basis = Float32Array.from({ length: RANK * dimensions }, () => next() / Math.sqrt(dimensions));
    this.scales = Float32Array.from({ length: RANK }, (_, i) => 1 / Math.sqrt(1 + i / 4));
    this.centres = Float32Array.from({ length: TOPICS * RANK }, (_, i) => next() * this.scales[i % RANK]!);
  }

  /** Writes `count` vectors drawn with `seed` into `out` (count × dimensions). */
  fill(out: Float32Array, count: number, seed: number): void {
    const d = this.dimensions;
    const next = gaussianSource(seed);
    const latent = new Float32Array(RANK);
    for (let row = 0; row < count; row++) {
      const topic = Math.floor(((next() * 1e6) % TOPICS + TOPICS) % TOPICS);
      for (let r = 0; r < RANK; r++) latent[r] = this.centres[topic * RANK + r]! + SPREAD * this.scales[r]! * next();
      const offset = row * d;
      for (let j = 0; j < d; j++) out[offset + j] = (NOISE * next()) / Math.sqrt(d);
      for (let r = 0; r < RANK; r++) {
        const weight = latent[r]!;
        const base = r * d;
        for (let j = 0; j < d; j++) out[offset + j]! += weight * this.basis[base + j]!;
      }
      let norm = 0;
      for (let j = 0; j < d; j++) norm += out[offset + j]! * out[offset + j]!;
      const scale = 1 / Math.sqrt(norm);
      for (let j = 0; j < d; j++) out[offset + j]! *= scale;
    }
  }
}

/** The corpus of `count` vectors, read from the cache folder or generated there. */
export function corpusVectors(cacheDir: string, count: number, dimensions: number, seed: number): { vectors: Float32Array; cached: boolean } {
  const path = join(cacheDir, `vectors-${count}x${dimensions}-s${seed}-r${RANK}.f32`);
  const vectors = new Float32Array(count * dimensions);
  if (existsSync(path)) {
    const fd = openSync(path, 'r');
    const bytes = new Uint8Array(vectors.buffer);
    let done = 0;
    while (done < bytes.length) done += readSync(fd, bytes, done, Math.min(1 << 30, bytes.length - done), done);
    closeSync(fd);
    return { vectors, cached: true };
  }
  new EmbeddingSpace(dimensions, seed).fill(vectors, count, seed + 1);
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(`${path}.tmp`, new Uint8Array(vectors.buffer));
  renameSync(`${path}.tmp`, path);
  return { vectors, cached: false };
}

/**
 * Queries from the same distribution as the corpus made with `corpusSeed` (its basis and topic centres),
 * drawn with `querySeed`, so not in the corpus: as a query embedded by the same model as the notes.
 * (Until 2026-12-01 the queries came from a space of their own, another basis and other centres: nearly
 * orthogonal to every note, their nearest neighbours were close to arbitrary, the hardest case for HNSW
 * and unlike any real query; the ANN figures and the default ef of 2,048 were measured on those.)
 */
export function queryVectors(count: number, dimensions: number, corpusSeed: number, querySeed: number, offTopic = 0): Float32Array {
  const out = new Float32Array(count * dimensions);
  new EmbeddingSpace(dimensions, corpusSeed).fill(out, count, querySeed);
  if (offTopic > 0) {
    // A query less like the notes: plus `offTopic` times a vector of an unrelated space (0: as the notes
    // are; large: the old, almost orthogonal queries), normalised again.
    const other = new Float32Array(count * dimensions);
    new EmbeddingSpace(dimensions, querySeed + 1).fill(other, count, querySeed + 2);
    for (let row = 0; row < count; row++) {
      let norm = 0;
      for (let j = row * dimensions; j < (row + 1) * dimensions; j++) norm += (out[j]! += offTopic * other[j]!) ** 2;
      const scale = 1 / Math.sqrt(norm);
      for (let j = row * dimensions; j < (row + 1) * dimensions; j++) out[j]! *= scale;
    }
  }
  return out;
}
