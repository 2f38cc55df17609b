import type { AnnHit, AnnIndex, AnnOptions, AnnThread } from './ann-index.js';
import type { EngineOptions, RawMatches } from './ann-engine.js';
import { searchAllowedKeys, type AllowedKeys } from './ann-filtered.js';
import type { EngineReply } from './ann-protocol.js';
import { mainThreadTransport, workerTransport, type EngineTransport } from './ann-transport.js';

/**
 * Defaults chosen with bench/semantic-ann.ts at 1M × 384-d. Queries drawn as the notes are: ef 64 gave
 * recall@10 0.9985 at p50 0.7 ms, 256 0.9995 at 1.3 ms, 512 0.999 at 2–2.6 ms. Queries mostly off the
 * notes' topics (QUERY_OFF_TOPIC=3: three times as much of an unrelated space): 256 gave 0.937, 512
 * 0.970, 1024 0.989. So 512, for such queries too, at about 20× the speed of an exact search. (Until
 * 2026-12-01 the bench drew every query from another space, almost orthogonal to every note, and the
 * default was 2048.) A denser graph (M 32, efConstruction 200) took 2.2× as long to build.
 */
export const ANN_DEFAULTS = { quantization: 'f16', connectivity: 16, expansionAdd: 128, expansionSearch: 512 } as const;

export async function openAnnClient(dir: string, name: string, options: AnnOptions, thread: AnnThread): Promise<AnnIndex> {
  const engineOptions = withDefaults(options);
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`ANN index name ${JSON.stringify(name)}: letters, digits, _ and - only`);
  const transport = thread === 'worker' ? workerTransport() : mainThreadTransport();
  try {
    const reply = await transport.call({ op: 'open', dir, name, options: engineOptions });
    return new AnnClient(transport, engineOptions.dimensions, reply);
  } catch (error) {
    await transport.close();
    throw error;
  }
}

function withDefaults(options: AnnOptions): EngineOptions {
  const out: EngineOptions = {
    dimensions: options.dimensions,
    quantization: options.quantization ?? ANN_DEFAULTS.quantization,
    connectivity: options.connectivity ?? ANN_DEFAULTS.connectivity,
    expansionAdd: options.expansionAdd ?? ANN_DEFAULTS.expansionAdd,
    expansionSearch: options.expansionSearch ?? ANN_DEFAULTS.expansionSearch,
    model: options.model ?? null,
  };
  for (const field of ['dimensions', 'connectivity', 'expansionAdd', 'expansionSearch'] as const) {
    if (!Number.isSafeInteger(out[field]) || out[field] <= 0) throw new Error(`ANN option ${field} must be a positive integer, not ${out[field]}`);
  }
  if (!['f32', 'f16', 'i8'].includes(out.quantization)) throw new Error(`ANN option quantization must be f32, f16 or i8, not ${out.quantization}`);
  return out;
}

class AnnClient implements AnnIndex {
  readonly needsRebuild: string | undefined;
  readonly savedWatermark: number;
  private count: number;

  constructor(private readonly transport: EngineTransport, readonly dimensions: number, opened: EngineReply) {
    this.needsRebuild = opened.needsRebuild;
    this.savedWatermark = opened.savedWatermark ?? 0;
    this.count = opened.size;
  }

  size(): number {
    return this.count;
  }

  async upsert(keys: readonly number[], vectors: readonly Float32Array[]): Promise<void> {
    if (keys.length !== vectors.length) throw new Error(`upsert: ${keys.length} keys and ${vectors.length} vectors`);
    if (keys.length === 0) return;
    // One fresh flat array: it is moved (not copied) to the worker, and the caller's arrays stay usable.
    const flat = new Float32Array(keys.length * this.dimensions);
    vectors.forEach((vector, i) => {
      if (vector.length !== this.dimensions) throw new Error(`upsert: key ${keys[i]} has ${vector.length} dimensions, the index ${this.dimensions}`);
      flat.set(vector, i * this.dimensions);
    });
    this.track(await this.transport.call({ op: 'upsert', keys: [...keys], vectors: flat }, [flat.buffer]));
  }

  async remove(keys: readonly number[]): Promise<void> {
    if (keys.length > 0) this.track(await this.transport.call({ op: 'remove', keys: [...keys] }));
  }

  failure(): Error | undefined {
    return this.transport.failure();
  }

  async has(key: number): Promise<boolean> {
    return (await this.transport.call({ op: 'has', key })).has === true;
  }

  async search(query: Float32Array, k: number): Promise<AnnHit[]> {
    const matches = await this.raw(query, k);
    return Array.from(matches.keys, (key, i) => ({ key, score: 1 - matches.distances[i]! }));
  }

  searchAllowed(query: Float32Array, k: number, allowed: AllowedKeys, selectivity: number): Promise<AnnHit[] | null> {
    return searchAllowedKeys((q, fetch) => this.raw(q, fetch), this.count, query, k, allowed, selectivity);
  }

  async save(watermark: number): Promise<void> {
    if (!Number.isSafeInteger(watermark) || watermark < 0) throw new Error(`save: the watermark must be a non-negative integer, not ${watermark}`);
    this.track(await this.transport.call({ op: 'save', watermark }));
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private async raw(query: Float32Array, k: number): Promise<RawMatches> {
    if (query.length !== this.dimensions) throw new Error(`search: the query has ${query.length} dimensions, the index ${this.dimensions}`);
    const copy = Float32Array.from(query);
    const reply = await this.transport.call({ op: 'search', query: copy, k }, [copy.buffer]);
    this.track(reply);
    return reply.matches!;
  }

  private track(reply: EngineReply): void {
    this.count = reply.size;
  }
}
