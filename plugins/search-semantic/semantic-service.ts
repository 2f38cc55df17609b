import { AsyncResource } from 'node:async_hooks';
import { join } from 'node:path';
import { readsAreScoped, type ActionCall, type BackendCaller, type BackendHandle, type Logger } from '../../core/index.js';
import type { BlocksIndex, IndexChange } from '../blocks/tokens.js';
import { AnnSync } from './ann-sync.js';
import { BlockIntake } from './block-intake.js';
import { intakeFingerprint, recordCleanStop, unchangedSinceCleanStop } from './clean-stop.js';
import { DEFAULT_BATCH, DEFAULT_EXACT_BELOW, DEFAULT_RETRY, DEFAULT_SCAN_WHILE_BUILDING_BELOW, DEFAULT_SAVE_EVERY_MS, DEFAULT_QUERY_TIMEOUT_MS, type SemanticConfig } from './config.js';
import { EmbeddingStore } from './embedding-store.js';
import { ignoreRules } from './ignore-rules.js';
import { Indexer, isRemote, untilStopped } from './indexer.js';
import { blocksOf, createSemanticSearch, unavailableReason, type HitBlock, type KeyedAnswer } from './semantic-search.js';
import type { SemanticQuery } from './tokens.js';
import { localOnlyAmong } from '../../core/index.js';

const COUNTS_FRESH_MS = 1_000;
/** A query's note counts the blocks still to embed no further than this (a range of the partial index). */
const NOTE_COUNT_CAP = 10_000;
/**
 * Changes are taken in this long after the write that reported them: a burst of writes is taken in
 * at once, and the intake's SQLite work does not run in the tail of the write's own answer.
 */
const INTAKE_DELAY_MS = 10;

export interface ServiceDeps {
  blocks: BlocksIndex;
  indexDir: string;
  config: SemanticConfig;
  /** Undefined when quire.json names no embedder: the plugin is then present and does nothing. */
  handle: BackendHandle<'embedder'> | undefined;
  log: Logger;
}

/**
 * Semantic search's parts, started in the background once the blocks index is ready (activation only
 * subscribes): the store, the intake of changed blocks, the indexer and the HNSW index.
 */
export class SemanticService {
  private store: EmbeddingStore | undefined;
  private intake: BlockIntake | undefined;
  indexer: Indexer | undefined;
  private ann: AnnSync | undefined;
  private readonly started: Promise<EmbeddingStore> | undefined;
  private comparing: Promise<void> | undefined;
  private changes: IndexChange[] = [];
  /** How long the last comparison of every block with the store took, and what it changed. */
  private lastComparison: { ms: number; changed: number; at: string; skipped?: string } | undefined;
  /** Comparisons asked for and not run to their end (a clean stop is recorded only at 0). */
  private comparisonsOwed = 0;
  private draining = false;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private counted: { at: number; note: string | undefined } = { at: 0, note: undefined };
  readonly search: ReturnType<typeof createSemanticSearch>;
  /**
   * Runs background work in the plugin's own context (made in activate), not in that of the action
   * whose write or call asked for it: what it starts (timers, the HNSW worker) is the plugin's.
   */
  private readonly background = AsyncResource.bind(<T>(fn: () => T): T => fn());

  constructor(private readonly deps: ServiceDeps) {
    if (deps.handle) {
      // Subscribed at once, so no write between activation and the first comparison goes unseen.
      this.unsubscribe = deps.blocks.onIndexed((change) => {
        // Every sync (each start's) reads every notebook's file again and reports it: nothing for this
        // plugin unless its local-only flag changed. Counted, it said "blocks just written are being
        // taken in" for the moment after a start, with nothing written (semantic-restart saw it).
        if (this.nothingToTakeIn(change)) return;
        this.changes.push(change);
        this.background(() => this.scheduleChanges());
      });
      this.started = deps.blocks.ready().then(() => this.start());
      this.started.catch((error: unknown) => deps.log.error('semantic search could not start', { error: String(error) }));
    }
    this.search = createSemanticSearch({
      store: () => this.opened(), blocks: deps.blocks, handle: deps.handle, ann: () => this.ann,
      exactBelow: deps.config.exactBelow ?? DEFAULT_EXACT_BELOW, scanWhileBuildingBelow: deps.config.exactBelow ?? DEFAULT_SCAN_WHILE_BUILDING_BELOW,
      incomplete: (call) => scopedNote(this.incompleteNote(), call),
      queryTimeoutMs: deps.config.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      adoptSize: async (model, dimensions) => {
        await this.indexer?.adoptSize(model, dimensions);
        this.counted.at = 0;
      },
    });
  }

  unavailable(caller?: BackendCaller): string | undefined {
    return unavailableReason(this.deps.handle, caller);
  }

  async opened(): Promise<EmbeddingStore> {
    if (!this.started) throw new Error(unavailableReason(undefined));
    return this.started;
  }

  private retry() {
    return { ...DEFAULT_RETRY, ...this.deps.config.retry };
  }

  private start(): EmbeddingStore {
    const { blocks, config, handle, log } = this.deps;
    const store = new EmbeddingStore(join(this.deps.indexDir, 'embeddings.db'), blocks.file);
    this.store = store;
    const intake = new BlockIntake({
      store, blocks, rules: ignoreRules(config.ignore), remote: () => isRemote(handle!.current()), activeModel: () => this.indexer!.activeModel(),
    });
    this.intake = intake;
    const ann = new AnnSync(store, this.deps.indexDir, config.saveEveryMs ?? DEFAULT_SAVE_EVERY_MS, log);
    this.ann = ann;
    this.indexer = new Indexer({
      store, intake, blocks, handle: handle!, retry: this.retry(), batchSize: config.batchSize ?? DEFAULT_BATCH, log,
      onVectors: () => { this.counted.at = 0; this.followVectors(); },
      // Whether a local-only notebook may be embedded depends on the embedder: compare everything again.
      onModel: async () => { this.compare(); },
      background: this.background,
    });
    const localOnly = localOnlyAmong(blocks.notebooks());
    for (const id of blocks.notebooks().keys()) this.egress.set(id, localOnly.has(id));
    // A new model is taken on before the comparison, so that it is not compared twice.
    const selected = handle!.current();
    if (selected && store.meta('model') !== this.indexer.activeModel()) store.activateModel(this.indexer.activeModel());
    this.followVectors();
    if (unchangedSinceCleanStop(store, blocks.changeMark(), this.fingerprint())) {
      this.lastComparison = { ms: 0, changed: 0, at: new Date().toISOString(), skipped: 'nothing changed since the last clean stop' };
      // Changes reported since activation (none to blocks, or the mark would have moved) are taken in as usual.
      if (this.changes.length > 0) this.scheduleChanges();
      // What was still to embed at the stop (a slow or failing embedder) is embedded now: without a
      // comparison or a change, nothing else wakes the indexer, and it stayed pending until the next write.
      this.indexer.wake();
    } else {
      // The comparison covers every change reported before it.
      this.changes = [];
      this.compare();
    }
    return store;
  }

  /** The HNSW index of the active model follows the store once there are vectors of it. */
  private followVectors(): void {
    const store = this.store;
    if (!store || !this.ann || !this.indexer) return;
    const model = this.indexer.activeModel();
    // Of the size the embedder answers now, when there are vectors of it (after a change of size, the
    // old ones stay until replaced); each a first row found, not a scan.
    const answered = store.dimensionsOf(model) ?? -1;
    const ofNow = store.prepared('SELECT dimensions FROM block_embeddings WHERE model = ? AND dimensions = ? AND has_vector = 1 LIMIT 1').pluck().get(model, answered) as number | undefined;
    const dimensions = ofNow ?? store.prepared('SELECT dimensions FROM block_embeddings WHERE model = ? AND has_vector = 1 LIMIT 1').pluck().get(model) as number | undefined;
    if (dimensions === undefined) return;
    this.ann.use(model, dimensions);
    this.ann.catchUp();
  }

  /** What the intake's verdicts depend on besides the blocks (clean-stop.ts). */
  private fingerprint(): string {
    const current = this.deps.handle?.current();
    return intakeFingerprint({
      model: this.indexer!.activeModel(), remote: current ? isRemote(current) : false,
      ignore: this.deps.config.ignore, localOnly: localOnlyAmong(this.deps.blocks.notebooks()),
    });
  }

  /** Compares every block with the store in the background (start, rebuild, another embedder), then embeds. */
  private compare(): void {
    this.comparisonsOwed++;
    const run = async () => {
      const started = Date.now();
      let stopped = false;
      const changed = await this.intake!.reconcile(() => (stopped = stopped || this.closed));
      if (!stopped) this.comparisonsOwed--;
      this.lastComparison = { ms: Date.now() - started, changed, at: new Date().toISOString() };
      if (changed > 0) this.deps.log.info('embeddings compared with the notes', this.lastComparison);
      this.counted.at = 0;
      this.indexer?.wake();
    };
    const previous = this.comparing ?? Promise.resolve();
    const current: Promise<void> = previous.then(run).catch((error: unknown) => this.deps.log.warn('comparing embeddings with the notes failed', { error: String(error) }))
      .finally(() => { if (this.comparing === current) this.comparing = undefined; });
    this.comparing = current;
  }

  private scheduleChanges(): void {
    if (this.draining) return;
    this.draining = true;
    setTimeout(() => {
      this.draining = false;
      if (!this.intake || this.closed) return;
      const changes = this.changes;
      this.changes = [];
      try {
        let touched = 0;
        for (const change of changes) {
          if (change.rebuilt) { this.compare(); continue; }
          touched += this.takeIn(change);
        }
        if (touched > 0) {
          this.counted.at = 0;
          this.followVectors();
          this.indexer?.wake();
        }
      } catch (error) {
        this.deps.log.warn('semantic search could not take in a change; comparing everything', { error: String(error) });
        this.compare();
      }
    }, INTAKE_DELAY_MS).unref();
  }

  /** The store rows of one reported change's blocks, documents and notebooks; how many changed. */
  private takeIn(change: IndexChange): number {
    const intake = this.intake!;
    return intake.checkIds([...change.upserted, ...change.removed]) + intake.checkDocuments(change.documents)
      + intake.checkNotebooks(this.egressChanged(change.notebooks));
  }

  private readonly egress = new Map<string, boolean>();

  /** A change of notebooks only, none of whose local-only flag differs from what was last seen. */
  private nothingToTakeIn(change: IndexChange): boolean {
    if (change.rebuilt || change.upserted.length > 0 || change.removed.length > 0 || change.documents.length > 0) return false;
    // Before the start: it reads every notebook's flag itself (the start's own sync reports them first).
    if (!this.intake) return true;
    const all = localOnlyAmong(this.deps.blocks.notebooks());
    return change.notebooks.every((id) => {
      const before = this.egress.get(id);
      return before === undefined ? !all.has(id) : before === all.has(id);
    });
  }

  /** Of the notebooks written, those whose local-only flag changed since last seen (or first seen). */
  private egressChanged(notebooks: readonly string[]): string[] {
    const all = localOnlyAmong(this.deps.blocks.notebooks());
    return notebooks.filter((id) => {
      const localOnly = all.has(id);
      const before = this.egress.get(id);
      this.egress.set(id, localOnly);
      return before === undefined ? localOnly : before !== localOnly;
    });
  }

  private incompleteNote(): string | undefined {
    if (this.comparing) return 'the embeddings are being compared with the notes: some blocks may be missing';
    if (this.changes.length > 0) return 'blocks just written are being taken in: they may be missing';
    if (Date.now() - this.counted.at < COUNTS_FRESH_MS) return this.counted.note;
    // Counted from the partial indexes only: a query must not pay for a pass over every row.
    const store = this.store!;
    const todo = store.todoUpTo(NOTE_COUNT_CAP);
    const localOnly = store.ignoredCounts()['local-only'];
    const parts: string[] = [];
    if (todo.pending + todo.failed > 0) {
      const again = store.hasStale(this.indexer!.activeModel()) ? ', some of them have vectors of another model and are being embedded again' : '';
      const count = (n: number) => (n > NOTE_COUNT_CAP ? `more than ${NOTE_COUNT_CAP}` : String(n));
      const waiting = todo.pending + todo.failed;
      parts.push(`${waiting > NOTE_COUNT_CAP ? `more than ${NOTE_COUNT_CAP}` : waiting} blocks are not embedded yet (${count(todo.failed)} failed)${again}`);
    }
    if (localOnly > 0) parts.push(`${localOnly} blocks of local-only notebooks are not sent to this remote embedder`);
    this.counted = { at: Date.now(), note: parts.length > 0 ? parts.join('; ') : undefined };
    return this.counted.note;
  }

  /** A page of hits with their blocks, each still visible to the caller. */
  async searchBlocks(query: SemanticQuery, call: ActionCall): Promise<{ answer: KeyedAnswer; blocks: Map<number, HitBlock> }> {
    const answer = await this.search(query, call);
    const store = await this.opened();
    const blocks = blocksOf(store, answer.hits.map((hit) => hit.key));
    for (const [key, block] of blocks) {
      // Checked again on the rows returned: a block moved to a hidden notebook meanwhile is left out.
      if (!this.deps.blocks.visibleTo(call, block.notebook) || (query.notebooks && !query.notebooks.includes(block.notebook))) blocks.delete(key);
    }
    return { answer, blocks };
  }

  /** The indexer's health; a reader learns only whether semantic search is on (counts cover private notebooks). */
  async status(call: ActionCall): Promise<Record<string, unknown>> {
    const selected = this.deps.handle?.current();
    const base = {
      enabled: this.deps.handle !== undefined,
      embedder: selected ? { plugin: selected.plugin, name: selected.name, model: selected.backend.model, dimensions: selected.backend.dimensions, remote: isRemote(selected) } : null,
      ...(this.unavailable() ? { unavailable: this.unavailable() } : {}),
    };
    // The counts cover every notebook: a caller who may not see them all (a reader, the agent under a deny rule) learns only whether it is on.
    if (!this.started || readsAreScoped(call)) return base;
    await this.opened();
    const counts = this.indexer!.counts();
    return {
      ...base,
      model: this.indexer!.activeModel(),
      ...counts,
      ignoredTotal: Object.values(counts.ignored).reduce((sum, n) => sum + n, 0),
      lastError: this.indexer!.lastError ?? this.store!.lastError() ?? null,
      pausedUntil: this.indexer!.pausedUntil > Date.now() ? new Date(this.indexer!.pausedUntil).toISOString() : null,
      throughput: this.indexer!.throughput(),
      comparing: this.comparing !== undefined,
      ...(this.lastComparison ? { lastComparison: this.lastComparison } : {}),
      queued: this.changes.length,
      vectorIndex: { state: this.ann!.state, size: this.ann!.size(), ...(this.ann!.lastProblem ? { problem: this.ann!.lastProblem } : {}) },
    };
  }

  async reindex(): Promise<void> {
    const store = await this.opened();
    store.reindex();
    this.counted.at = 0;
    this.indexer!.resume();
    this.indexer!.wake();
  }

  async retryFailed(): Promise<number> {
    const store = await this.opened();
    const retried = store.retryFailed();
    this.counted.at = 0;
    this.indexer!.resume();
    this.indexer!.wake();
    return retried;
  }

  /** Waits for the comparison under way, then embeds until nothing is due (the CLI's `index embeddings`). */
  async drain(call: ActionCall): Promise<'done' | 'breaker' | 'stopped' | 'none'> {
    // Read first: the call watches its stop from its start (a stop before it looked abandoned the job).
    const { signal } = call;
    // Each wait stops at the call's stop: a start's comparison of every block can take minutes.
    if (await untilStopped(this.opened(), signal) === 'stop') return 'stopped';
    while (this.comparing) if (await untilStopped(this.comparing, signal) === 'stop') return 'stopped';
    const outcome = await this.indexer!.drain((counts) => {
      call.progress({ done: counts.indexed, total: counts.indexed + counts.pending + counts.failed - counts.gaveUp, message: 'blocks embedded' });
    }, () => call.stopped !== undefined, signal);
    if (outcome === 'stopped') return outcome;
    await this.ann!.settled();
    await this.ann!.save();
    return outcome;
  }

  /** Waits until the background work asked for so far is done (tests). */
  async settled(): Promise<void> {
    await this.opened();
    while (this.comparing) await this.comparing;
    await this.ann!.settled();
  }

  async close(): Promise<void> {
    // Read while still subscribed: every change the mark counts has been reported to this.changes.
    const stop = this.stopMark();
    this.closed = true;
    this.unsubscribe?.();
    if (!this.started) return;
    await this.started.catch(() => undefined);
    while (this.comparing) await this.comparing;
    await this.indexer?.close();
    await this.ann?.close();
    if (stop !== undefined) this.recordCleanStop(stop);
    this.store?.close();
  }

  /**
   * The blocks' change mark when every change it counts has been reported to this service, with the
   * fingerprint of the other inputs in the same turn: once unsubscribed, this service hears of no more
   * changes, and a notebook's local-only flag changed meanwhile (the blocks plugin still runs) would not
   * move the mark. The fingerprint is compared again when the stop is recorded.
   */
  private stopMark(): { mark: string; fingerprint: string } | undefined {
    if (!this.started || !this.indexer || this.deps.blocks.changesUnreported()) return undefined;
    try {
      return { mark: this.deps.blocks.changeMark(), fingerprint: this.fingerprint() };
    } catch {
      return undefined;
    }
  }

  /**
   * Takes in the changes still queued, then records the clean stop: only when no comparison is owed,
   * nothing the fingerprint covers changed since the mark was read, and the rows are the active model's.
   */
  private recordCleanStop(stop: { mark: string; fingerprint: string }): void {
    const store = this.store;
    if (!store || !this.intake || !this.indexer || this.comparisonsOwed > 0) return;
    const pending = this.changes;
    this.changes = [];
    if (pending.some((change) => change.rebuilt)) return;
    try {
      if (store.meta('model') !== this.indexer.activeModel() || this.fingerprint() !== stop.fingerprint) return;
      for (const change of pending) this.takeIn(change);
      recordCleanStop(store, stop.mark, stop.fingerprint);
    } catch (error) {
      this.deps.log.warn('the clean stop of semantic search could not be recorded: the next start compares every block', { error: String(error) });
    }
  }
}

/**
 * What a caller whose reads are scoped (a reader, an agent under a deny rule) may learn of what is
 * missing: that something is, not how much. The counts cover every notebook, private ones included,
 * as the status does, which a reader gets without them too.
 */
function scopedNote(note: string | undefined, call: ActionCall): string | undefined {
  if (note === undefined || !readsAreScoped(call)) return note;
  return 'some blocks are not embedded yet or are being taken in: semantic results may be incomplete';
}
