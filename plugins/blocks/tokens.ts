import type Database from 'better-sqlite3';
import { createToken, type ActionCall } from '../../core/index.js';
import type { IndexChange } from './index-change-feed.js';

export type { IndexChange } from './index-change-feed.js';

/** What the blocks plugin offers the plugins that search and query its index. */
export interface BlocksIndex {
  /** The SQLite file of the index (`<workspace>/index/quire.db`). */
  readonly file: string;
  /** A read-only connection that sees the last committed state of the index. */
  readonly reader: Database.Database;
  /** The text preparation of the `blocks_fts` table, to apply to query terms too. */
  searchText(text: string): string;
  /** How `blocks_fts` holds an id in its notebook and path columns (one token), for filters on them. */
  ftsId(id: string): string;
  /** How `blocks_fts` holds a subtype (one exact token). */
  ftsSubtype(subtype: string): string;
  /**
   * Every notebook with its name, who may read it, and `egress: 'local-only'` when its `.notebook.json`
   * says its text must never go to a backend that declares dataEgress.
   */
  notebooks(): ReadonlyMap<string, { name: string; access: 'private' | 'published'; egress?: 'local-only' }>;
  /**
   * Calls `listener` after index writes committed (never inside one, so it can neither fail nor slow
   * them), with the blocks, documents and notebooks they touched, or `rebuilt` after a rebuild. A crash
   * can lose the last report: compare at start. Returns the unsubscribe.
   */
  onIndexed(listener: (change: IndexChange) => void): () => void;
  /**
   * A mark of the blocks' rows (`<instance>:<count>`, committed state) that changes with every block
   * added, deleted, or changed in its text, type or place, by any writer, and is new for a new or
   * emptied index: two equal marks mean the same blocks. A plugin that derives state from the blocks
   * records it when it stops, having taken in every change reported to it (see changesUnreported), and
   * at the next start skips comparing every block when the mark has not moved.
   */
  changeMark(): string;
  /** Whether a write is open, or committed and not yet reported to onIndexed listeners. */
  changesUnreported(): boolean;
  /** Resolves once the index has caught up with the files at start-up. */
  ready(): Promise<void>;
  /**
   * Runs `work` with every write to the notes held back (a snapshot must not capture a half-written
   * state, a rollback must not race a write). `syncIndex` brings the index in line with files `work`
   * changed in data/. `changesFiles` (a rollback): the gate waits rather than guess an id's notebook from
   * the index while the work waits and runs, as during a sync.
   */
  withWritesPaused<T>(work: (ops: { syncIndex(): Promise<void> }) => Promise<T>, options?: { changesFiles?: boolean }): Promise<T>;
  /**
   * Calls `listener` with a document's file text as it still is, before the document is changed,
   * moved or removed (inside the write, so no change escapes it).
   */
  onBeforeChange(listener: (change: { id: string; op: 'update' | 'move' | 'remove' | 'rollback'; by: string; notebook: string; path: string; hpath: string; text: string }) => Promise<void>,
    /** Asked first: a listener that does not want this change spares the read of the file. */
    wants?: (change: { id: string; op: 'update' | 'move' | 'remove' | 'rollback'; by: string }) => boolean): () => void;
  /**
   * Calls `listener` before a notebook's settings change (`fields` of its `.notebook.json`: `name`,
   * `access`, `agent`, `egress`) or the notebook is removed, with who asked. Synchronous; must not throw.
   */
  onNotebookChange(listener: (change: { notebook: string; op: 'settings' | 'remove'; fields: readonly string[]; by: string }) => void): () => void;
  /**
   * For writers that change document files directly (a snapshot rollback, with writes paused): report
   * the change first, so that the file as it was is kept (history). `path` is data/-relative.
   */
  beforeFileChange(path: string, op: 'rollback' | 'remove', by: string): Promise<void>;
  /**
   * Whether a caller may see what a notebook holds, also in copies kept elsewhere (history, snapshots):
   * not when a deny rule hides it from the agent; for a reader, only while it is published.
   */
  visibleTo(call: Pick<ActionCall, 'principal' | 'deniedNotebooks'>, notebook: string): boolean;
  /**
   * Tells the call which notebooks' notes `value` (its result) holds, from the ids in it (ids of
   * blocks, documents, notebooks, and paths under a notebook's folder); see ActionCall.returned.
   */
  reportReturned(call: Pick<ActionCall, 'returned'>, value: unknown): void;
  /** The data folder, where document files live. */
  readonly dataDir: string;
}

export const BLOCKS_INDEX = createToken<BlocksIndex>('blocks.index');
