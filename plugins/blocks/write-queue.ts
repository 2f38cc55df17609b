import { throwIfStopped, type ActionCall } from '../../core/index.js';

/**
 * Orders the writes of the workspace. Every write reads, changes and writes back whole files, so two
 * at once on one document would lose one. Writes inside documents (`runOn`) are serialised per
 * document only, so unrelated documents do not wait for each other; structural changes (`run`:
 * creating, moving or removing documents and notebooks, imports, syncs, snapshots) run alone, after
 * everything queued before them and before everything queued after, which keeps moves between
 * documents and notebooks free of lock-ordering questions. Arrival order holds per document.
 */
export class WriteQueue {
  /** The last structural write queued: everything after it waits for it. */
  private exclusive: Promise<unknown> = Promise.resolve();
  /** Document writes queued since that structural write, which the next one waits for. */
  private readonly shared = new Set<Promise<unknown>>();
  /**
   * Runs before each structural write, once the writes before it are done (the store checkpoints its
   * write journal there, so nothing recorded before can be written back over what the structural write does).
   */
  beforeExclusive: (() => Promise<void> | undefined) | undefined;
  /** The last write queued on each document (removed once it has settled, so the map stays small). */
  private readonly documents = new Map<string, Promise<unknown>>();

  /**
   * Queues a structural write. With the call it is made for, its turn is a safe point: a call stopped
   * (time limit, cancel) while it waited writes nothing and answers why, rather than writing after its answer.
   */
  run<T>(task: () => Promise<T>, call?: Pick<ActionCall, 'stopped'>): Promise<T> {
    const before = Promise.all([this.exclusive, ...this.shared]).then(() => this.beforeExclusive?.());
    this.shared.clear();
    const result = before.then(guarded(task, call));
    this.exclusive = settled(result);
    return result;
  }

  /** Queues a write inside the given documents; see `run` for `call`. (A block moved between two documents is a structural write, `run`: store.writeTogether.) */
  runOn<T>(documentIds: readonly string[], task: () => Promise<T>, call?: Pick<ActionCall, 'stopped'>): Promise<T> {
    const ids = [...new Set(documentIds)];
    const before = Promise.all([this.exclusive, ...ids.map((id) => this.documents.get(id))]);
    const result = before.then(guarded(task, call));
    const done = settled(result);
    this.shared.add(done);
    for (const id of ids) this.documents.set(id, done);
    void done.then(() => {
      this.shared.delete(done);
      for (const id of ids) if (this.documents.get(id) === done) this.documents.delete(id);
    });
    return result;
  }

  /** Resolves once every write queued so far has finished. */
  async idle(): Promise<void> {
    for (;;) {
      const last = this.exclusive;
      await Promise.all([last, ...this.shared]);
      if (last === this.exclusive && this.shared.size === 0) return;
    }
  }
}

function guarded<T>(task: () => Promise<T>, call: Pick<ActionCall, 'stopped'> | undefined): () => Promise<T> {
  return call ? () => { throwIfStopped(call, 'The write (nothing was written)'); return task(); } : task;
}

const settled = (promise: Promise<unknown>): Promise<void> => promise.then(() => undefined, () => undefined);
