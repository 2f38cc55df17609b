import type { Logger } from '../../core/index.js';
import type { HistoryStore, Version } from './history-store.js';

type NewVersion = Omit<Version, 'version' | 'time'>;

/**
 * Keeps versions off the write's latency path, as note apps do: a burst of edits to one document
 * keeps one version, the state before the burst (an edit by the same author within `coalesceMs` of the
 * last version kept keeps none, so only the first edit of a burst writes one). That version is written atomically and
 * durably before the edit that starts the burst changes the file, so a crash loses none: the states a
 * crash could have lost are the ones inside a burst, which are not kept anyway. Moves, removals and
 * rollbacks always keep theirs. Readers of the history wait for what is still being written (`flush`),
 * and closing the plugin waits for it too.
 */
export class VersionWriter {
  /** Per document, when the last version was kept and who made the edit it was kept for. */
  private readonly lastKept = new Map<string, { at: number; by: string }>();
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly store: HistoryStore, private readonly coalesceMs: number, private readonly log: Logger, private readonly now: () => number = Date.now) {}

  /**
   * Whether a change needs its version kept (asked before the document's file is read for it). A burst
   * is one author's: an edit by someone else (the agent after the person) keeps the state between them.
   */
  wants(change: { id: string; op: Version['op']; by: string }): boolean {
    if (change.op !== 'update' || this.coalesceMs <= 0) return true;
    const last = this.lastKept.get(change.id);
    return last === undefined || authorOf(last.by) !== authorOf(change.by) || this.now() - last.at >= this.coalesceMs;
  }

  /**
   * Queues the version; resolves once it is written (or its failure logged: a version that cannot be
   * written does not stop the edit). Versions of one document are written in order.
   */
  record(version: NewVersion): Promise<void> {
    const at = new Date(this.now());
    this.lastKept.set(version.documentId, { at: at.getTime(), by: version.by });
    const previous = this.writing.get(version.documentId) ?? Promise.resolve();
    const next = previous.then(() => this.store.record(version, at)).catch((error: unknown) => {
      this.log.error('a document version could not be written', { document: version.documentId, error: (error as Error).message });
    });
    this.writing.set(version.documentId, next);
    void next.then(() => { if (this.writing.get(version.documentId) === next) this.writing.delete(version.documentId); });
    return next;
  }

  /**
   * Resolves once every version queued so far is on disk: those queued when it was called (waiting for
   * later ones too could wait for ever under steady edits).
   */
  async flush(): Promise<void> {
    await Promise.all([...this.writing.values()]);
  }

  /** After a clear, the next edit of these documents keeps a version again. */
  forget(documentIds: readonly string[] | 'all'): void {
    if (documentIds === 'all') this.lastKept.clear();
    else for (const id of documentIds) this.lastKept.delete(id);
  }
}

/**
 * Who an edit is by, for telling bursts apart: the agent's turn (`agent:<session>/<turn>`), not each of
 * its calls (`…/<call>`), or every call of a turn would keep a version and push older ones out.
 */
function authorOf(by: string): string {
  if (!by.startsWith('agent:')) return by;
  const parts = by.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : by;
}
