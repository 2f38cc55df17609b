import { AnnEngine, type EngineOptions, type RawMatches } from './ann-engine.js';

/** What the client asks of the engine; plain data, so it can cross to the worker thread. */
export type EngineRequest =
  | { readonly op: 'open'; readonly dir: string; readonly name: string; readonly options: EngineOptions }
  | { readonly op: 'upsert'; readonly keys: readonly number[]; readonly vectors: Float32Array }
  | { readonly op: 'remove'; readonly keys: readonly number[] }
  | { readonly op: 'has'; readonly key: number }
  | { readonly op: 'search'; readonly query: Float32Array; readonly k: number }
  | { readonly op: 'save'; readonly watermark: number }
  | { readonly op: 'close' };

export interface EngineReply {
  /** Size after the request, so the client answers size() without a round trip. */
  readonly size: number;
  readonly needsRebuild?: string | undefined;
  readonly savedWatermark?: number;
  readonly has?: boolean;
  readonly matches?: RawMatches;
}

/** Queries may overtake waiting writes; writes, saves and close keep their order. */
export function isQuery(request: EngineRequest): boolean {
  return request.op === 'search' || request.op === 'has';
}

/** One engine per thread that serves requests (the worker, or the caller's thread in 'main' mode). */
export class EngineHost {
  private engine: AnnEngine | undefined;

  handle(request: EngineRequest): EngineReply {
    if (request.op === 'open') {
      this.engine = AnnEngine.open(request.dir, request.name, request.options);
      return { size: this.engine.size(), needsRebuild: this.engine.needsRebuild, savedWatermark: this.engine.savedWatermark };
    }
    if (request.op === 'close') {
      this.engine = undefined; // the graph is freed with the last reference
      return { size: 0 };
    }
    const engine = this.engine;
    if (!engine) throw new Error('the ANN index is closed');
    switch (request.op) {
      case 'upsert':
        engine.upsert(request.keys, request.vectors);
        break;
      case 'remove':
        engine.remove(request.keys);
        break;
      case 'has':
        return { size: engine.size(), has: engine.has(request.key) };
      case 'search':
        return { size: engine.size(), matches: engine.search(request.query, request.k) };
      case 'save':
        engine.save(request.watermark);
        break;
    }
    return { size: engine.size() };
  }
}
