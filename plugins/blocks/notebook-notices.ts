/** A notebook's settings changed (`fields`: which of its `.notebook.json`), or the notebook removed. */
export interface NotebookChange {
  notebook: string;
  op: 'settings' | 'remove';
  fields: readonly string[];
  /** The caller, as provenance spells it (`person:alice`, `agent:<session>/<turn>/<call>`). */
  by: string;
}

export type NotebookChangeListener = (change: NotebookChange) => void;

/**
 * Told before a notebook's own file changes or the notebook goes, with who asks: a snapshot of the
 * notes says what a notebook is now, not who renamed or removed it, and a turn's undo must leave alone
 * what a person did while the turn ran. Listeners are synchronous and must not throw (a notice is no
 * reason to refuse a person's change).
 */
export class NotebookNotices {
  private readonly listeners: NotebookChangeListener[] = [];

  /** Returns what ends the listening. */
  on(listener: NotebookChangeListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('onNotebookChange takes a function');
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at !== -1) this.listeners.splice(at, 1);
    };
  }

  tell(change: NotebookChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
