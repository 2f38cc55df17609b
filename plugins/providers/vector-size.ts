import { ModelError } from '../../core/turn/model-provider.js';

/**
 * The size of an embedder's vectors: the configured one, held to; or else learnt from its answers. A
 * server whose model was swapped behind its name answers another size: a whole answer of one new size is
 * taken on (the indexer then embeds every block again at it, the query path says so), where before every
 * batch failed "expected N" until the kernel restarted.
 */
export class VectorSize {
  private learnt: number;

  constructor(private readonly configured: number | undefined, private readonly who: string) {
    this.learnt = configured ?? 0;
  }

  get value(): number {
    return this.learnt;
  }

  /** The vectors of one call, checked: all of one size, the configured one if there is one; that size is then the embedder's. */
  take<T extends readonly Float32Array[]>(vectors: T): T {
    const size = this.configured || (vectors[0]?.length ?? 0);
    const wrong = vectors.findIndex((vector) => vector.length !== size);
    if (wrong !== -1) {
      const expected = this.configured ? `configured ${size} (plugins.providers.config.embedder.dimensions)` : `${size} for text 0 of the same answer`;
      throw new ModelError('server', `${this.who} answered a vector of ${vectors[wrong]!.length} dimensions for text ${wrong}, ${expected}`);
    }
    if (vectors.length > 0) this.learnt = size;
    return vectors;
  }
}
