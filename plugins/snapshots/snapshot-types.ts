/** The shapes of the snapshot repository's records and of its work. */

export interface FileEntry { hash: string; size: number; mtimeMs: number }

export interface Snapshot {
  id: string;
  memo: string;
  created: string;
  /** `person:<name>` or `agent:<session>/<turn>`. */
  origin: string;
  parent: string | null;
  tags: string[];
  /** data/-relative path → content. */
  files: Record<string, FileEntry>;
  /**
   * `<workspace>/skills/`-relative path → content. Absent in snapshots taken before skills were
   * covered: a rollback to one of those restores data/ and leaves skills/ as it is.
   */
  skills?: Record<string, FileEntry>;
  /**
   * Where the audit log ended when the snapshot was taken: an anchor `quire audit verify` holds the log
   * against, kept outside the log. Absent in snapshots taken before it was recorded.
   */
  auditHead?: { seq: number; hash: string };
  /** When the scan of data/ began (ms since the epoch): which of its entries the next scan may trust (see `settled`). */
  scanStarted?: number;
  /**
   * In a turn's end snapshot: the documents (data/-relative paths, and folders ending in `/` for a
   * moved document's children) that someone other than the turn removed or moved while it ran: not the
   * turn's to bring back. Absent in older records (every removal then counts as the turn's, as before).
   */
  removedByOthers?: string[];
  /** With it: the paths the turn itself removed or moved (never someone else's, whatever folder they lie in). */
  removedByTurn?: string[];
  /** With it: notebooks' `.notebook.json` → the settings someone other than the turn changed (a rename). */
  settingsByOthers?: Record<string, string[]>;
  /** With it: those the turn itself changed (one changed by both is a conflict for the undo). */
  settingsByTurn?: Record<string, string[]>;
}

/** What a turn's end snapshot notes of others' changes meanwhile (turn-removals.ts). */
export type TurnNotes = Pick<Snapshot, 'removedByOthers' | 'removedByTurn' | 'settingsByOthers' | 'settingsByTurn'>;

export interface FileDiff { added: string[]; removed: string[]; changed: string[] }

/** The tables of a scan of the workspace as it is now: data/ and skills/. */
export interface Tables { files: Record<string, FileEntry>; skills: Record<string, FileEntry> }

/** A rollback's changes: data/'s, and skills/' when the snapshot holds them. */
export type RollbackDiff = FileDiff & { skills?: FileDiff };

/** How long work is watched: a stop check at each safe point (it throws to stop), and progress. */
export interface WorkHooks {
  stopCheck?(): void;
  onProgress?(done: number, total: number, message: string): void;
  /**
   * A rollback's text for a file of data/ instead of the snapshot's (given a reader of that), or
   * undefined for the snapshot's: what is not the caller's to take back (a notebook's privacy) stays.
   */
  writeAs?(path: string, snapshotText: () => Promise<Buffer>): Promise<string | undefined>;
}
