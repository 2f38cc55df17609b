import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Index, MetricKind, ScalarKind } from './usearch-module.js';
import { writeFileAtomicSync } from '../../../core/fs/atomic-write.js';
import type { AnnQuantization } from './ann-index.js';
import { readSidecar, type AnnSidecar, type SidecarExpectation } from './ann-sidecar.js';

type UsearchIndex = Index;

/** The options of ann-index.ts with defaults filled in (plain data: it crosses to the worker). */
export interface EngineOptions {
  readonly dimensions: number;
  readonly quantization: AnnQuantization;
  readonly connectivity: number;
  readonly expansionAdd: number;
  readonly expansionSearch: number;
  readonly model: string | null;
}

/** Raw top-k: keys and cosine distances (1 − similarity), best first. */
export interface RawMatches {
  readonly keys: Float64Array;
  readonly distances: Float32Array;
}

const SCALAR: Record<AnnQuantization, ScalarKind> = {
  f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8,
};

/**
 * The usearch graph and its files, synchronous: it runs on the worker thread (ann-worker.ts) or, for
 * tests and benchmarks, on the calling thread. Keys are JavaScript integers below 2^53.
 */
export class AnnEngine {
  private constructor(
    private readonly dir: string,
    private readonly name: string,
    private readonly options: EngineOptions,
    private index: UsearchIndex,
    private file: string | undefined,
    readonly needsRebuild: string | undefined,
    readonly savedWatermark: number,
  ) {}

  static open(dir: string, name: string, options: EngineOptions): AnnEngine {
    const expected: SidecarExpectation = {
      dimensions: options.dimensions, quantization: options.quantization, connectivity: options.connectivity, model: options.model,
    };
    const read = readSidecar(sidecarPath(dir, name), expected);
    const loaded: Loaded = read.ok ? load(dir, read.sidecar, options) : read;
    removeOrphans(dir, name, loaded.ok ? loaded.sidecar.file : undefined);
    if (!loaded.ok) return new AnnEngine(dir, name, options, createIndex(options), undefined, loaded.reason, 0);
    return new AnnEngine(dir, name, options, loaded.index, loaded.sidecar.file, undefined, loaded.sidecar.watermark);
  }

  size(): number {
    return this.index.size();
  }

  has(key: number): boolean {
    return this.index.contains(BigInt(key)) as boolean;
  }

  /** `vectors` holds keys.length rows. A key given twice keeps its last row. */
  upsert(keys: readonly number[], vectors: Float32Array): void {
    const d = this.options.dimensions;
    if (vectors.length !== keys.length * d) throw new Error(`upsert: ${keys.length} keys need ${keys.length * d} numbers, got ${vectors.length}`);
    const lastRow = new Map<number, number>();
    keys.forEach((key, row) => lastRow.set(checkKey(key), row));
    const unique = [...lastRow.keys()];
    const bigKeys = BigUint64Array.from(unique, BigInt);
    this.index.remove(bigKeys);
    const rows = unique.length === keys.length ? vectors : gatherRows(vectors, [...lastRow.values()], d);
    try {
      // Always all cores (0): usearch sizes its per-thread scratch space when an add grows the index,
      // for that add's thread count, and a later add with more threads than that would use a slot
      // that does not exist (index_dense.hpp try_reserve / thread_lock_). Never vary it.
      this.index.add(bigKeys, rows, 0);
    } catch (error) {
      // A batch add is not all-or-nothing: take the keys of this batch out again, so the caller's
      // retry starts from "absent" and the index never holds half a batch it was told failed.
      this.index.remove(bigKeys);
      throw error;
    }
  }

  remove(keys: readonly number[]): void {
    if (keys.length > 0) this.index.remove(BigUint64Array.from(keys, (key) => BigInt(checkKey(key))));
  }

  search(query: Float32Array, k: number): RawMatches {
    if (query.length !== this.options.dimensions) throw new Error(`search: the query has ${query.length} dimensions, the index ${this.options.dimensions}`);
    const wanted = Math.min(Math.max(0, Math.floor(k)), this.index.size());
    if (wanted === 0) return { keys: new Float64Array(0), distances: new Float32Array(0) };
    const found = this.index.search(query, wanted, 1);
    return { keys: Float64Array.from(found.keys, Number), distances: Float32Array.from(found.distances) };
  }

  /** See AnnIndex.save: graph file, fsync, folder fsync, then the sidecar (the commit point), then the old file goes. */
  save(watermark: number): void {
    const file = `${this.name}.${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.usearch`;
    const path = join(this.dir, file);
    try {
      mkdirSync(this.dir, { recursive: true });
      this.index.save(path);
      syncPath(path, 'r+');
      syncPath(this.dir, 'r');
      const sidecar: AnnSidecar = {
        format: 1, file, bytes: statSync(path).size, count: this.index.size(), watermark,
        dimensions: this.options.dimensions, quantization: this.options.quantization,
        connectivity: this.options.connectivity, model: this.options.model,
      };
      writeFileAtomicSync(sidecarPath(this.dir, this.name), `${JSON.stringify(sidecar, null, 2)}\n`);
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
    const previous = this.file;
    this.file = file;
    if (previous && previous !== file) rmSync(join(this.dir, previous), { force: true });
  }
}

export function sidecarPath(dir: string, name: string): string {
  return join(dir, `${name}.usearch.json`);
}

function createIndex(options: EngineOptions): UsearchIndex {
  return new Index({
    dimensions: options.dimensions, metric: MetricKind.Cos, quantization: SCALAR[options.quantization],
    connectivity: options.connectivity, expansion_add: options.expansionAdd, expansion_search: options.expansionSearch, multi: false,
  });
}

type Loaded = { ok: true; index: UsearchIndex; sidecar: AnnSidecar } | { ok: false; reason: string };

function load(dir: string, sidecar: AnnSidecar, options: EngineOptions): Loaded {
  const path = join(dir, sidecar.file);
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    return { ok: false, reason: `the index file ${sidecar.file} is missing` };
  }
  if (bytes !== sidecar.bytes) return { ok: false, reason: `the index file ${sidecar.file} has ${bytes} bytes, ${sidecar.bytes} were saved (damaged)` };
  // ef is not stored in the file: it comes from the constructor, so build with the options, then load.
  const index = createIndex(options);
  try {
    index.load(path);
  } catch (error) {
    return { ok: false, reason: `the index file ${sidecar.file} cannot be loaded (${(error as Error).message})` };
  }
  if (index.dimensions() !== options.dimensions || index.connectivity() !== options.connectivity || index.size() !== sidecar.count) {
    return { ok: false, reason: `the index file ${sidecar.file} does not hold what its sidecar says (damaged)` };
  }
  return { ok: true, index, sidecar };
}

/**
 * Graph files of this index other than the current one (saves a crash interrupted, or replaced ones),
 * and temporary sidecars a crash left behind (writeFileAtomicSync names them `.<file>.<hex>.tmp`).
 */
function removeOrphans(dir: string, name: string, keep: string | undefined): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  // Names are letters, digits, _ and - (checked by the client), so the pattern cannot match another index's files.
  const ours = new RegExp(`^(${name}\\.[a-z0-9-]+\\.usearch|\\.${name}\\.usearch\\.json\\.[0-9a-f]+\\.tmp)$`);
  for (const entry of entries) {
    if (entry !== keep && ours.test(entry)) {
      rmSync(join(dir, entry), { force: true });
    }
  }
}

function syncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function checkKey(key: number): number {
  if (!Number.isSafeInteger(key) || key < 0) throw new Error(`ANN keys are non-negative safe integers, not ${key}`);
  return key;
}

function gatherRows(vectors: Float32Array, rows: readonly number[], d: number): Float32Array {
  const out = new Float32Array(rows.length * d);
  rows.forEach((row, i) => out.set(vectors.subarray(row * d, (row + 1) * d), i * d));
  return out;
}
