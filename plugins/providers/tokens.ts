import { createToken } from '../../core/index.js';

/** Turns texts into vectors (DESIGN.md §6). Vectors of another model or size are never compared. */
export interface Embedder {
  readonly id: string;
  /** The model id the server reported (or the configured one), stored with every vector. */
  readonly model: string;
  /** The vectors' length: configured, or learnt from the first answer (0 until then). */
  readonly dimensions: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** The configured embedder, when quire.json names one. */
export interface EmbedderSource {
  current(): Embedder | undefined;
}

export const EMBEDDER = createToken<EmbedderSource>('models.embedder');
