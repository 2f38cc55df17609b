import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../core/index.js';
import type { AnnIndex } from './ann/ann-index.js';
import type { EmbeddingStore } from './embedding-store.js';
import { blobToVector } from './vector-blob.js';

const PAGE = 512;
const FILE_PREFIX = 'embeddings-';

export type AnnState = 'none' | 'opening' | 'rebuilding' | 'ready' | 'failed';
/**
 * The HNSW graph lives on a worker thread of its own: loading, saving and rebuilding a large index take
 * seconds (about 1 s per GB) that would otherwise hold the kernel's event loop. QUIRE_ANN_THREAD=main
 * keeps it on the calling thread (for profiling).
 */
function annThread(): 'worker' | 'main' {
  return process.env.QUIRE_ANN_THREAD === 'main' ? 'main' : 'worker';
}

/**
 * Keeps the HNSW index (a cache of the store) in line with the store: one file per model under
 * `<workspace>/index/`, keys = the store's keys. Every change the index must follow has a sequence
 * number in the store; the index applies them in order and is saved on a schedule (never per block)
 * with the highest sequence it holds. At open, a file behind the store is caught up from that
 * sequence; a missing, damaged or foreign file is rebuilt from the store in the background (queries
 * meanwhile are answered exactly when filtered and small, else reported incomplete).
 */
export class AnnSync {
  private index: AnnIndex | undefined;
  private model: string | undefined;
  private dimensions = 0;
  private applied = 0;
  private saved = 0;
  private catching: Promise<void> | undefined;
  private catchAgain = false;
  /** Queries waiting for the catch-up to pass the changes stored before them (caughtUp). */
  private pageWaiters: (() => void)[] = [];
  private opening: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  state: AnnState = 'none';
  lastProblem: string | undefined;

  constructor(private readonly store: EmbeddingStore, private readonly dir: string, saveEveryMs: number, private readonly log: Logger) {
    this.timer = setInterval(() => { void this.save().catch((error: unknown) => this.log.warn('saving the vector index failed', { error: String(error) })); }, saveEveryMs);
    this.timer.unref();
  }

  /**
   * The index of `model` when it is complete and caught up to the last batch applied; otherwise undefined.
   * An index whose worker thread stopped is opened again (from its saved file, caught up from the store):
   * it stayed 'ready' and every search through it failed until the kernel restarted.
   */
  ready(model: string, dimensions: number): AnnIndex | undefined {
    if (this.state !== 'ready' || this.model !== model || this.dimensions !== dimensions) return undefined;
    const failure = this.index?.failure();
    if (failure === undefined) return this.index;
    this.state = 'failed';
    this.lastProblem = failure.message;
    this.log.warn('the vector index stopped: it is opened again', { error: failure.message });
    this.use(model, dimensions);
    return undefined;
  }

  /**
   * Waits until the changes stored before the call are applied (usually a batch or two of vectors): a
   * query then sees every vector stored before it began. Not those stored after: while a fast embedder
   * wrote faster than the graph took them in, a query waited for the whole backlog (2.3 s for 6,000
   * blocks). A cancelled query stops waiting.
   */
  async caughtUp(signal?: AbortSignal): Promise<void> {
    const upTo = this.store.maxSeq();
    if (!this.catching || this.applied >= upTo) return;
    // One listener for the whole wait (one per page waited piled up: MaxListenersExceededWarning).
    let wake: (() => void) | undefined;
    const onAbort = (): void => wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (this.catchingNow() && this.applied < upTo && !signal?.aborted) {
        // Woken at each page applied (the catch-up itself goes on while changes keep coming), when it
        // ends, or at the cancel.
        const woken = new Promise<void>((resolve) => { wake = resolve; this.pageWaiters.push(resolve); });
        await Promise.race([this.catching ?? Promise.resolve(), woken]);
        const waiter = wake;
        this.pageWaiters = this.pageWaiters.filter((other) => other !== waiter);
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.throwIfAborted();
  }

  /** Whether a catch-up runs (read anew each time: it ends and starts while a query waits). */
  private catchingNow(): boolean {
    return this.catching !== undefined;
  }

  size(): number {
    return this.index?.size() ?? 0;
  }

  /** Opens (or switches to) the index of `model`; the work runs in the background. */
  use(model: string, dimensions: number): void {
    if (this.closed || (this.model === model && this.dimensions === dimensions && this.state !== 'failed')) return;
    this.model = model;
    this.dimensions = dimensions;
    // At once, not when the opening below begins (after the one before it): the graph held is of another
    // model or size. It stayed 'ready' meanwhile, so a search was handed it (or found none once it was
    // closed) and a catch-up put vectors of the new size into it.
    this.state = 'opening';
    // The store's last change now, before the saved graph loads (seconds at a million vectors) while the
    // indexer goes on writing: a graph past this is past the store (it was reset or lost its last writes).
    const storeSeq = this.store.maxSeq();
    const previous = this.opening ?? Promise.resolve();
    this.opening = previous.then(() => this.open(model, dimensions, storeSeq)).catch((error: unknown) => {
      this.state = 'failed';
      this.lastProblem = error instanceof Error ? error.message : String(error);
      this.log.warn('the vector index could not be opened', { error: this.lastProblem });
    });
  }

  /**
   * Waits, at most `ms`, while a saved graph is being opened (not rebuilt): a search right after a start
   * (a one-shot `quire search`) finds the graph rather than answering without semantic results.
   */
  async whileOpening(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.state !== 'opening' || this.opening === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    // A search cancelled (or at its time limit) meanwhile stops waiting at once.
    await Promise.race([this.opening, new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      onAbort = resolve;
      signal?.addEventListener('abort', onAbort, { once: true });
    })]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    signal?.throwIfAborted();
  }

  /** Waits for the opening or rebuild under way and the changes asked for so far (tests, the CLI). */
  async settled(): Promise<void> {
    await this.opening;
    while (this.catching) await this.catching;
  }

  private async open(model: string, dimensions: number, storeSeq: number): Promise<void> {
    if (this.closed || !this.wanted(model, dimensions)) return;
    await this.closeIndex(false, 'opening');
    const name = `${FILE_PREFIX}${createHash('sha1').update(`${model}\u0000${dimensions}`).digest('hex').slice(0, 16)}`;
    await this.removeOtherFiles(name);
    const { openAnnIndex } = await import('./ann/ann-index.js');
    let index = await openAnnIndex(this.dir, name, { dimensions, model }, annThread());
    if (this.closed || !this.wanted(model, dimensions)) { await index.close(); return; }
    // A saved graph past the store (embeddings.db removed or reset, or its last commits lost with the
    // power) holds vectors under keys the store gives out again, and would skip its changes up to there:
    // rebuilt from the store instead of trusted.
    let ahead: string | undefined;
    if (index.needsRebuild === undefined && index.savedWatermark > storeSeq) {
      ahead = `the saved vector index covers changes up to ${index.savedWatermark}, past the stored vectors' ${storeSeq} (the embeddings store was reset, or lost its last writes)`;
      await index.close();
      await this.removeOtherFiles('');
      index = await openAnnIndex(this.dir, name, { dimensions, model }, annThread());
      if (this.closed || !this.wanted(model, dimensions)) { await index.close(); return; }
    }
    this.index = index;
    const rebuildBecause = ahead ?? index.needsRebuild;
    if (rebuildBecause !== undefined) {
      this.lastProblem = rebuildBecause;
      this.state = 'rebuilding';
      this.log.info('rebuilding the vector index from the stored vectors', { reason: rebuildBecause });
      // Everything up to this sequence is in the rows read below; later changes are caught up after.
      const upTo = this.store.maxSeq();
      let after = 0;
      for (;;) {
        // Another model or size asked for meanwhile: its opening waits behind this one.
        if (this.closed || this.index !== index || !this.wanted(model, dimensions)) return;
        const rows = this.store.vectorsOf(model, dimensions, after, PAGE);
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.key;
        await index.upsert(rows.map((row) => row.key), rows.map((row) => blobToVector(row.vector)));
      }
      this.applied = upTo;
      this.saved = 0;
      // A save that fails (a full disk) leaves the graph rebuilt in memory, in use, and saved on the
      // schedule: it failed the opening, and semantic search found nothing until the next write.
      try {
        await index.save(upTo);
        this.saved = upTo;
      } catch (error) {
        this.log.warn('saving the rebuilt vector index failed: it is used as it is, and saved again later', { error: String(error) });
      }
    } else {
      this.applied = index.savedWatermark;
      this.saved = index.savedWatermark;
    }
    await this.catchUpNow();
    if (this.index === index && this.wanted(model, dimensions)) this.state = 'ready';
  }

  /** Whether the graph of `model` at `dimensions` is still the one asked for (not switched from since). */
  private wanted(model: string, dimensions: number): boolean {
    return this.model === model && this.dimensions === dimensions;
  }

  /** Applies the store's changes since the last applied (after each batch of vectors). */
  catchUp(): void {
    if (!this.index || this.state === 'opening' || this.state === 'rebuilding') return;
    if (this.catching) { this.catchAgain = true; return; }
    this.catching = this.catchUpNow()
      .catch((error: unknown) => this.log.warn('updating the vector index failed', { error: String(error) }))
      .finally(() => {
        this.catching = undefined;
        if (this.catchAgain) { this.catchAgain = false; this.catchUp(); }
      });
  }

  private async catchUpNow(): Promise<void> {
    const index = this.index;
    if (!index) return;
    for (;;) {
      if (this.closed || this.index !== index) return;
      const changes = this.store.changesSince(this.applied, PAGE);
      if (changes.length === 0) return;
      const upsertKeys: number[] = [];
      const vectors: Float32Array[] = [];
      const removeKeys: number[] = [];
      for (const change of changes) {
        if (change.vector && change.model === this.model && change.dimensions === this.dimensions) {
          upsertKeys.push(change.key);
          vectors.push(blobToVector(change.vector));
        } else {
          removeKeys.push(change.key);
        }
      }
      if (removeKeys.length > 0) await index.remove(removeKeys);
      if (upsertKeys.length > 0) await index.upsert(upsertKeys, vectors);
      this.applied = changes[changes.length - 1]!.seq;
      for (const wake of this.pageWaiters.splice(0)) wake();
    }
  }

  /** Writes the index if it changed since the last save; removed keys it now holds are forgotten. */
  async save(): Promise<void> {
    const index = this.index;
    if (!index || this.state !== 'ready' || this.applied <= this.saved) return;
    const watermark = this.applied;
    await index.save(watermark);
    this.saved = watermark;
    this.store.forgetRemovedUpTo(watermark);
  }

  private async removeOtherFiles(keep: string): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(FILE_PREFIX) && !name.startsWith(`${keep}.`)) await rm(join(this.dir, name), { force: true }).catch(() => undefined);
    }
  }

  private async closeIndex(save: boolean, next: AnnState = 'none'): Promise<void> {
    const index = this.index;
    if (!index) return;
    if (save) await this.save().catch(() => undefined);
    this.index = undefined;
    this.state = next;
    await index.close();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    // First: a rebuild under way stops at its next batch (a stop waited for the whole rebuild, minutes
    // at a million vectors), and a graph half rebuilt is not saved (the next start rebuilds it).
    this.closed = true;
    await this.opening;
    while (this.catching) await this.catching;
    await this.closeIndex(this.state === 'ready');
  }
}
