/** What changed in the index with the writes committed since the last report (see BlocksIndex.onIndexed). */
export interface IndexChange {
  /** Blocks written (new or changed): their rows may differ from before. */
  readonly upserted: readonly string[];
  /** Blocks whose rows went. */
  readonly removed: readonly string[];
  /** Documents whose blocks all may have changed place (moved, renamed above) or were inserted in bulk (an import). */
  readonly documents: readonly string[];
  /** Notebooks whose `.notebook.json` was written or read again (access, egress), or that were removed. */
  readonly notebooks: readonly string[];
  /** The index was emptied and filled again (a rebuild): compare everything. The lists are then empty. */
  readonly rebuilt: boolean;
}

export type IndexChangeListener = (change: IndexChange) => void;

/**
 * Collects the ids the index writes touch and reports them after the write committed, on a later turn
 * of the event loop: a listener can neither fail nor slow a write. It may be told of a change that was
 * rolled back (it then finds the rows as they were); it is never left untold of one that committed,
 * except across a crash, which listeners cover by comparing at start. Costs nothing without listeners.
 */
export class IndexChangeFeed {
  private readonly listeners = new Set<IndexChangeListener>();
  private upserted = new Set<string>();
  private removed = new Set<string>();
  private documents = new Set<string>();
  private notebooks = new Set<string>();
  private rebuilt = false;
  private scheduled = false;

  /**
   * `writing` tells whether the writer is inside a transaction (a sync holds one across awaits);
   * `changed` is called inside the write for every block change told, with listeners or without
   * (it moves the blocks' change mark, change-mark.ts).
   */
  constructor(private readonly writing: () => boolean, private readonly changed: () => void = () => undefined) {}

  /** Whether writes are collected and not yet reported (or the writer's transaction is still open). */
  get pending(): boolean {
    return this.scheduled || this.writing();
  }

  listen(listener: IndexChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  upsert(id: string): void {
    this.changed();
    if (this.listeners.size === 0 || this.rebuilt) return;
    this.upserted.add(id);
    this.schedule();
  }

  remove(id: string): void {
    this.changed();
    if (this.listeners.size === 0 || this.rebuilt) return;
    this.removed.add(id);
    this.schedule();
  }

  document(id: string): void {
    this.changed();
    if (this.listeners.size === 0 || this.rebuilt) return;
    this.documents.add(id);
    this.schedule();
  }

  notebook(id: string): void {
    if (this.listeners.size === 0) return;
    this.notebooks.add(id);
    this.schedule();
  }

  /** The index was cleared: what was collected no longer matters, listeners compare everything. */
  clear(): void {
    this.changed();
    if (this.listeners.size === 0) return;
    this.rebuilt = true;
    this.upserted = new Set();
    this.removed = new Set();
    this.documents = new Set();
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * The writer's transaction has ended (a sync's COMMIT or ROLLBACK): what it collected is reported now,
   * not at the next 20 ms look. Until then the changes counted as unreported, and a kernel closed in
   * that moment (a one-shot CLI command) recorded no clean stop for semantic search, so its next start
   * compared every block.
   */
  settle(): void {
    if (this.scheduled && !this.writing()) this.flush();
  }

  private flush(): void {
    // Reported already (settle), since this look was scheduled.
    if (!this.scheduled) return;
    // Still inside the transaction (a sync awaiting files): report once it has ended.
    if (this.writing()) {
      setTimeout(() => this.flush(), 20).unref();
      return;
    }
    this.scheduled = false;
    const change: IndexChange = {
      upserted: [...this.upserted], removed: [...this.removed], documents: [...this.documents], notebooks: [...this.notebooks], rebuilt: this.rebuilt,
    };
    this.upserted = new Set();
    this.removed = new Set();
    this.documents = new Set();
    this.notebooks = new Set();
    this.rebuilt = false;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own: the write it reports has long committed.
      }
    }
  }
}
