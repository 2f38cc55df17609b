/** The contracts live in core (DESIGN.md §6); kept here under their old import path for the providers' files. */
export type { Embedder, Reranker } from '../../core/backends/contracts.js';
