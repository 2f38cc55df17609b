import type { BackendHandle, Logger, SelectedBackend } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';
import { textHash, type BlockIntake } from './block-intake.js';
import type { RetryConfig } from './config.js';
import type { DueBlock, EmbeddingStore, StoreCounts } from './embedding-store.js';
import { vectorToBlob } from './vector-blob.js';
import { localOnlyAmong } from '../../core/index.js';

/** What a drain reports as it goes. */
export type DrainCounts = Pick<StoreCounts, 'indexed' | 'pending' | 'failed' | 'gaveUp'>;

/** How often a drain (the CLI's `index embeddings`) reports its counts while a pass runs. */
const DRAIN_PROGRESS_MS = 1_000;

/** `<plugin>/<backend>:<model>`: vectors of another model id (or backend serving it) are never compared. */
export function modelKeyOf(selected: SelectedBackend<'embedder'>): string {
  return `${selected.plugin}/${selected.name}:${selected.backend.model}`;
}

/**
 * The key a selected embedder's vectors are stored under. A server may answer under another model name
 * than the one configured (an Azure deployment, a proxy's alias): the name it answered is kept per
 * configured key, so that a restart, which knows only the configured name until the first answer,
 * neither re-marked every block (and sent a billed batch) nor searched vectors of no model.
 */
export function storedModelKey(store: Pick<EmbeddingStore, 'meta'>, selected: SelectedBackend<'embedder'>): string {
  const live = modelKeyOf(selected);
  const configured = configuredKeyOf(selected);
  // A name learnt from an answer in this process is the newest word; before one, the kept name.
  if (live !== configured) return live;
  return store.meta(answeredKey(configured)) ?? configured;
}

/** The key of the model as configured (before any answer named another). */
function configuredKeyOf(selected: SelectedBackend<'embedder'>): string {
  return `${selected.plugin}/${selected.name}:${selected.backend.configuredModel ?? selected.backend.model}`;
}

const answeredKey = (key: string): string => `answeredAs:${key}`;

export function isRemote(selected: SelectedBackend<'embedder'> | undefined): boolean {
  return selected?.effects.includes('dataEgress') ?? false;
}

/** How a pass ended. */
type PassEnd = 'idle' | 'breaker' | 'closed' | 'none';

const THROUGHPUT_WINDOW_MS = 60_000;

export interface IndexerDeps {
  store: EmbeddingStore;
  intake: BlockIntake;
  blocks: BlocksIndex;
  handle: BackendHandle<'embedder'>;
  retry: RetryConfig;
  batchSize: number;
  log: Logger;
  /** Called after vectors were written or dropped (the HNSW index follows). */
  onVectors(): void;
  /** Called when another model became the active one. */
  onModel(model: string): Promise<void>;
  /** Runs `fn` outside the async context of whichever action asked for a pass (as the plugin itself). */
  background<T>(fn: () => T): T;
}

/**
 * Embeds the blocks that need it, in the background, in batches: never inside a write of the notes.
 * A block whose batch failed waits `baseMs × 2^(failures−1)` (at most `maxMs`) and is given up after
 * `maxFailures`. Any failure of a call (an error, a wrong count or size of vectors) stops the pass: the
 * circuit breaker pauses the indexer (`pauseMs`, doubling while calls keep failing) instead of sending
 * the next batches to a backend that is down.
 */
export class Indexer {
  private running: Promise<PassEnd> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly abort = new AbortController();
  private pause: number;
  pausedUntil = 0;
  lastError: string | undefined;
  private readonly recent: { at: number; blocks: number; ms: number }[] = [];

  constructor(private readonly deps: IndexerDeps) {
    this.pause = deps.retry.pauseMs;
  }

  /** Asks for a pass soon (after a change); one runs at a time, and a pass asked for meanwhile follows it. */
  wake(): void {
    if (this.closed) return;
    if (this.running) { this.again = true; return; }
    if (Date.now() < this.pausedUntil) return;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = this.deps.background(() => setTimeout(() => { this.timer = undefined; void this.run(); }, Math.max(0, delayMs)));
    this.timer.unref();
  }

  /** Runs a pass now (or waits for the running one and runs another); resolves with how it ended. */
  async run(): Promise<PassEnd> {
    while (this.running) {
      this.again = true;
      await this.running;
    }
    this.again = false;
    this.running = this.pass().catch((error: unknown) => {
      this.lastError = error instanceof Error ? error.message : String(error);
      this.deps.log.warn('embedding pass failed', { error: this.lastError });
      return 'breaker' as const;
    });
    const end = await this.running;
    this.running = undefined;
    if (this.again && end !== 'breaker') this.wake();
    return end;
  }

  /** The active model: the selected embedder's, or the one the store last used when none is available. */
  activeModel(): string {
    const selected = this.deps.handle.current();
    return selected ? storedModelKey(this.deps.store, selected) : this.deps.store.meta('model') ?? '';
  }

  private async ensureModel(model: string): Promise<void> {
    if (this.deps.store.meta('model') === model) return;
    this.deps.store.activateModel(model);
    this.deps.log.info('embedding model changed: every block is embedded again in the background', { model });
    await this.deps.onModel(model);
  }

  /** A size the embedder answered outside a pass (a query's): the blocks are embedded again at it. */
  async adoptSize(model: string, dimensions: number): Promise<void> {
    if (this.closed) return;
    await this.ensureDimensions(model, dimensions);
    this.wake();
  }

  private async ensureDimensions(model: string, dimensions: number): Promise<void> {
    if (!this.deps.store.noteDimensions(model, dimensions)) return;
    this.deps.log.info('the embedder\'s vectors changed size: every block is embedded again in the background', { model, dimensions });
    await this.deps.onModel(model);
  }

  private async pass(): Promise<PassEnd> {
    const { store, retry, batchSize } = this.deps;
    const selected = this.deps.handle.current();
    if (!selected) return 'none';
    await this.ensureModel(storedModelKey(store, selected));
    // A size the embedder is configured with is known before any block is due (none is, after a restart
    // with the size changed: the old vectors all looked done).
    if (selected.backend.dimensions > 0) await this.ensureDimensions(storedModelKey(store, selected), selected.backend.dimensions);
    const remote = isRemote(selected);
    for (;;) {
      if (this.closed) return 'closed';
      const now = Date.now();
      let due = store.due(now, retry, batchSize);
      if (due.length === 0) break;
      if (remote) {
        // The last check before the text leaves: a block now in a local-only notebook stays here.
        const localOnly = localOnlyAmong(this.deps.blocks.notebooks());
        const kept = due.filter((block) => !localOnly.has(block.notebook));
        if (kept.length < due.length) {
          this.deps.intake.checkIds(due.filter((block) => !kept.includes(block)).map((block) => block.block_id));
          due = kept;
          if (due.length === 0) continue;
        }
      }
      const started = Date.now();
      let vectors: Float32Array[];
      // A signal per call: listeners the client adds to it go with it (one long-lived signal collected them).
      const call = new AbortController();
      const stop = (): void => call.abort();
      this.abort.signal.addEventListener('abort', stop, { once: true });
      try {
        vectors = await selected.backend.embed(due.map((block) => block.content), call.signal);
        if (vectors.length !== due.length) throw new Error(`the embedder answered ${vectors.length} vectors for ${due.length} texts`);
        const size = vectors[0]?.length ?? 0;
        if (size === 0 || vectors.some((vector) => vector.length !== size)) throw new Error('the embedder answered vectors of different or zero sizes');
      } catch (error) {
        if (this.closed) return 'closed';
        // One text the embedder refuses (too long for its model) failed the whole batch, and its batch
        // with it every time (due() orders by failures, then key), until every block of it was given up.
        if (refusesInput(error) && due.length > 1) {
          const end = await this.oneByOne(selected, due, remote, call.signal);
          if (end !== undefined) return end;
          continue;
        }
        this.breakerOpens(due.map((block) => block.key), error);
        return 'breaker';
      } finally {
        this.abort.signal.removeEventListener('abort', stop);
      }
      this.pause = retry.pauseMs;
      // The first answer of a remote server may name the model it really is.
      const model = this.answeredAs(selected);
      await this.ensureModel(model);
      await this.ensureDimensions(model, vectors[0]!.length);
      try {
        this.write(due, vectors, model, remote);
      } catch (error) {
        // The store could not take them (a full disk): paused as after a failed call, the blocks not
        // blamed (every later write woke a pass that sent the same billed batch again, at once).
        this.breakerOpens([], error);
        return 'breaker';
      }
      this.recent.push({ at: Date.now(), blocks: due.length, ms: Date.now() - started });
      this.deps.onVectors();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const next = store.nextDue(retry);
    if (next !== undefined) this.schedule(next - Date.now() + 10);
    return 'idle';
  }

  /**
   * A batch the embedder refused as input, sent again a text at a time: what it refuses is marked failed
   * alone (retried later, given up after maxFailures), without pausing everything; the rest is written.
   * A failure of any other kind opens the breaker as a batch's does.
   */
  private async oneByOne(selected: SelectedBackend<'embedder'>, due: DueBlock[], remote: boolean, signal: AbortSignal): Promise<PassEnd | undefined> {
    for (const block of due) {
      if (this.closed) return 'closed';
      // Checked before each text leaves, as before each batch: a notebook made local-only while these go
      // one by one (up to a batch's count of calls) keeps the rest here.
      if (remote && localOnlyAmong(this.deps.blocks.notebooks()).has(block.notebook)) {
        this.deps.intake.checkIds([block.block_id]);
        continue;
      }
      let vector: Float32Array | undefined;
      try {
        [vector] = await selected.backend.embed([block.content], signal);
        if (!vector || vector.length === 0) throw new Error('the embedder answered no vector');
      } catch (error) {
        if (this.closed) return 'closed';
        if (!refusesInput(error)) {
          this.breakerOpens([block.key], error);
          return 'breaker';
        }
        const message = error instanceof Error ? error.message : String(error);
        this.deps.store.markFailed([block.key], Date.now(), message);
        this.deps.log.warn('the embedder refused a block\'s text', { error: message, block: block.block_id });
        continue;
      }
      const model = this.answeredAs(selected);
      await this.ensureModel(model);
      try {
        this.write([block], [vector], model, remote);
      } catch (error) {
        this.breakerOpens([], error);
        return 'breaker';
      }
    }
    this.deps.onVectors();
    return undefined;
  }

  /**
   * The model key after an answer, kept for the next start under the configured key when it names
   * another model (and again when the server answers under the configured name, over a name kept before).
   */
  private answeredAs(selected: SelectedBackend<'embedder'>): string {
    const answered = modelKeyOf(selected);
    const configured = configuredKeyOf(selected);
    const known = this.deps.store.meta(answeredKey(configured));
    if (known !== answered && (answered !== configured || known !== undefined)) this.deps.store.setMeta(answeredKey(configured), answered);
    return answered;
  }

  private write(due: DueBlock[], vectors: Float32Array[], model: string, remote: boolean): void {
    const { store } = this.deps;
    store.transaction(() => {
      due.forEach((block, i) => {
        const vector = vectors[i]!;
        store.writeVector(block.key, block.hash, textHash(block.content), model, vectorToBlob(vector), vector.length, remote, model);
      });
    });
    if (remote) {
      // A block moved into a local-only notebook while its text was on the way keeps no remote vector.
      const localOnly = localOnlyAmong(this.deps.blocks.notebooks());
      const places = store.prepared('SELECT id, notebook FROM blk.blocks WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(due.map((block) => block.block_id))) as { id: string; notebook: string }[];
      const moved = places.filter((place) => localOnly.has(place.notebook)).map((place) => place.id);
      if (moved.length > 0) this.deps.intake.checkIds(moved);
    }
  }

  private breakerOpens(keys: number[], error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const now = Date.now();
    if (keys.length > 0) this.deps.store.markFailed(keys, now, message);
    this.lastError = message;
    this.pausedUntil = now + this.pause;
    this.deps.log.warn('the embedder failed: embedding paused', { error: message, pauseMs: this.pause, blocks: keys.length });
    this.schedule(this.pause);
    this.pause = Math.min(this.pause * 2, this.deps.retry.maxMs);
  }

  /** Ends the pause of the circuit breaker (reindex, retry_failed, the CLI). */
  resume(): void {
    this.pausedUntil = 0;
    this.pause = this.deps.retry.pauseMs;
  }

  /**
   * Passes until no block is due now: every pending block embedded, or failed. Stops early when the
   * breaker opens (the embedder is failing) or `stopped` says so.
   */
  async drain(progress: (counts: DrainCounts) => void, stopped: () => boolean, signal?: AbortSignal): Promise<'done' | 'breaker' | 'stopped' | 'none'> {
    this.resume();
    for (;;) {
      if (stopped()) return 'stopped';
      // A pass embeds everything due: a stop is not waited out to its end (the pass goes on, as the
      // background indexer's does; the drain's caller stops waiting for it).
      // Said while the pass runs too: a pass is every block due, so a first run over a large workspace
      // (an hour at 1M blocks) showed 0% until its end.
      // From the counts the triggers keep only: the full counts' stale and ignored ones scan rows (a
      // re-embedding at 1M, every second on the main thread); the ignored rows hardly move in a pass.
      const { store } = this.deps;
      const ignored = Object.values(store.ignoredCounts()).reduce((sum, n) => sum + n, 0);
      const ticker = setInterval(() => {
        try {
          const todo = store.todo(this.deps.retry.maxFailures);
          progress({ ...todo, indexed: store.rowCount() - todo.pending - todo.failed - ignored });
        } catch { /* closing: the pass's end says it */ }
      }, DRAIN_PROGRESS_MS);
      const end = await untilStopped(this.run(), signal).finally(() => clearInterval(ticker));
      if (end === 'stop') return 'stopped';
      progress(this.counts());
      if (end === 'none') return 'none';
      if (end === 'breaker') return 'breaker';
      if (end === 'closed') return 'stopped';
      if (this.deps.store.due(Date.now(), this.deps.retry, 1).length === 0) return 'done';
    }
  }

  counts(): StoreCounts {
    return this.deps.store.counts(this.activeModel(), this.deps.retry.maxFailures);
  }

  throughput(): { blocksPerSecond: number; blocks: number; windowMs: number } {
    const since = Date.now() - THROUGHPUT_WINDOW_MS;
    while (this.recent.length > 0 && this.recent[0]!.at < since) this.recent.shift();
    const blocks = this.recent.reduce((sum, batch) => sum + batch.blocks, 0);
    const ms = this.recent.reduce((sum, batch) => sum + batch.ms, 0);
    return { blocksPerSecond: ms > 0 ? Math.round((blocks / ms) * 10_000) / 10 : 0, blocks, windowMs: THROUGHPUT_WINDOW_MS };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }
}

/** `work`'s end, or 'stop' as soon as `signal` aborts (its listener removed either way). */
export async function untilStopped<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | 'stop'> {
  if (!signal) return work;
  if (signal.aborted) return 'stop';
  let onAbort = (): void => undefined;
  const stop = new Promise<'stop'>((resolve) => { onAbort = () => resolve('stop'); signal.addEventListener('abort', onAbort, { once: true }); });
  try {
    return await Promise.race([work, stop]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * An embedder's error about a text itself: too long for its model. Only that: a key out of quota, a
 * misspelt model or any request the server refuses whole is an invalid request too, and sending every
 * block alone then made a request per block of the store, none paused.
 */
function refusesInput(error: unknown): boolean {
  return (error as { category?: unknown } | null)?.category === 'context_overflow';
}
