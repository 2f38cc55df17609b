import { ModelError } from '../../core/turn/model-provider.js';

/** Answers in a row of one new size before it is taken on: a server flapping between two models is not followed. */
const STABLE_ANSWERS = 3;
/**
 * A new size is taken on at most once in this long after the last change, doubled at each change (each
 * embeds every block again, a billed pass): a server answering two sizes at random had three in a row of
 * the other one in every ten minutes.
 */
const ADOPT_EVERY_MS = 10 * 60_000;

/**
 * The size of an embedder's vectors: the configured one, held to; or else learnt from its answers. A
 * server whose model was swapped behind its name answers another size: taken on once it has answered it
 * STABLE_ANSWERS times in a row (the indexer then embeds every block again at it, the query path says so),
 * where before every batch failed "expected N" until the kernel restarted. Until then, and for a second
 * change within ADOPT_EVERY_MS, an answer of another size fails as before (the indexer pauses and retries):
 * a server alternating two sizes made every block be embedded again at each answer, without end.
 */
export class VectorSize {
  private learnt: number;
  private candidate: { size: number; answers: number } | undefined;
  private lastAdopted = Number.NEGATIVE_INFINITY;
  private adoptions = 0;

  constructor(private readonly configured: number | undefined, private readonly who: string) {
    this.learnt = configured ?? 0;
  }

  get value(): number {
    return this.learnt;
  }

  /** The vectors of one call, checked: all of one size, the configured one if there is one; that size is then the embedder's. */
  take<T extends readonly Float32Array[]>(vectors: T, now = Date.now()): T {
    if (vectors.length === 0) return vectors;
    const size = this.configured || vectors[0]!.length;
    const wrong = vectors.findIndex((vector) => vector.length !== size);
    if (wrong !== -1) {
      const expected = this.configured ? `configured ${size} (plugins.providers.config.embedder.dimensions)` : `${size} for text 0 of the same answer`;
      throw new ModelError('server', `${this.who} answered a vector of ${vectors[wrong]!.length} dimensions for text ${wrong}, ${expected}`);
    }
    if (this.learnt === 0 || size === this.learnt) {
      this.learnt = size;
      this.candidate = undefined;
      return vectors;
    }
    this.candidate = this.candidate?.size === size ? { size, answers: this.candidate.answers + 1 } : { size, answers: 1 };
    const wait = ADOPT_EVERY_MS * 2 ** Math.max(0, this.adoptions - 1);
    if (this.candidate.answers >= STABLE_ANSWERS && now - this.lastAdopted >= wait) {
      this.learnt = size;
      this.lastAdopted = now;
      this.adoptions++;
      this.candidate = undefined;
      return vectors;
    }
    throw new ModelError('server', `${this.who} answered vectors of ${size} dimensions, expected ${this.learnt} as before; a new size is taken on after ${STABLE_ANSWERS} answers of it in a row, at most once in ${Math.round(wait / 60_000)} minutes now`);
  }
}
