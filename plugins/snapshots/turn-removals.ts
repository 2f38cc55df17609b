/** Removals and moves remembered at most (the oldest go first): enough for the turns running at once. */
const CHANGES_KEPT = 10_000;
/** Turns remembered at most: a turn that never takes its end snapshot (a crash) is dropped first. */
const TURNS_TRACKED = 64;

interface Gone {
  /** The order of the notices (not the clock, which may step back). */
  seq: number;
  by: string;
  /** The document's path, and for a move also its folder of child documents (ending in `/`). */
  paths: string[];
  /** For a change of a notebook's settings (its `.notebook.json`, the one path): the fields it changed. */
  fields?: readonly string[];
}

/** What a turn's end snapshot keeps of who removed or moved documents while the turn ran. */
export interface TurnRemovalNotes {
  /** Paths (and folders, ending in `/`) someone other than the turn removed or moved. */
  removedByOthers: string[];
  /** Paths the turn itself removed or moved: never someone else's, whatever folder they lie in. */
  removedByTurn: string[];
  /** Notebooks' `.notebook.json` paths → the settings someone other than the turn changed (a rename: `name`). */
  settingsByOthers: Record<string, string[]>;
  /** And those the turn itself changed: a setting changed by both is a conflict for the undo. */
  settingsByTurn: Record<string, string[]>;
}

/**
 * Who removed or moved documents, and removed or renamed notebooks, while a turn ran, from the blocks
 * plugin's notice before each change: a snapshot says what is gone or renamed, not who did it. A turn's undo leaves alone what someone else (a
 * person, another session) removed or moved meanwhile; what the turn itself did is undone as before.
 * A turn whose notices were not all kept (more than CHANGES_KEPT since it began, or pushed out by
 * TURNS_TRACKED later turns) gets none: its undo then counts every removal as its own, as before.
 */
export class OthersRemovals {
  private readonly changes: Gone[] = [];
  private readonly started = new Map<string, number>();
  private seq = 0;

  /**
   * Before a document is removed or moved (`path` its data/-relative file), a notebook removed (`path`
   * its `.notebook.json`), or a notebook's settings changed (`fields`); `by` the caller.
   */
  note(by: string, op: 'remove' | 'move' | 'settings', path: string, fields: readonly string[] = []): void {
    const paths = op === 'move' ? [path, `${path.replace(/\.json$/, '')}/`] : [path];
    this.changes.push({ seq: ++this.seq, by, paths, ...(op === 'settings' ? { fields } : {}) });
    if (this.changes.length <= CHANGES_KEPT) return;
    const dropped = this.changes.splice(0, this.changes.length - CHANGES_KEPT).at(-1)!.seq;
    // A running turn that needed what was dropped knows too little now.
    for (const [turn, since] of this.started) if (since <= dropped) this.started.delete(turn);
  }

  /** A turn (`agent:<session>/<turn>`) is taking its first snapshot: what is removed from now on is noted for it. */
  turnStarted(turn: string): void {
    this.started.set(turn, this.seq);
    if (this.started.size > TURNS_TRACKED) this.started.delete(this.started.keys().next().value!);
  }

  /** The turn's first snapshot failed: nothing is noted for it. */
  forget(turn: string): void {
    this.started.delete(turn);
  }

  /** At the turn's end (while writes are held): what was removed or moved since it started, and by whom. */
  take(turn: string): TurnRemovalNotes | undefined {
    const since = this.started.get(turn);
    this.started.delete(turn);
    if (since === undefined) return undefined;
    const own = `${turn}/`;
    const after = this.changes.filter((change) => change.seq > since);
    const gone = after.filter((change) => change.fields === undefined);
    const paths = (mine: boolean) => [...new Set(gone.filter((change) => change.by.startsWith(own) === mine).flatMap((change) => change.paths))].sort();
    const settings = (mine: boolean) => {
      const out: Record<string, string[]> = {};
      for (const change of after) {
        if (change.fields === undefined || change.by.startsWith(own) !== mine) continue;
        const path = change.paths[0]!;
        out[path] = [...new Set([...(out[path] ?? []), ...change.fields])].sort();
      }
      return out;
    };
    return { removedByOthers: paths(false), removedByTurn: paths(true).filter((path) => !path.endsWith('/')), settingsByOthers: settings(false), settingsByTurn: settings(true) };
  }
}

/** Whether a path is one of these, or lies in one of their folders. */
export function isAmong(path: string, gone: readonly string[]): boolean {
  return gone.some((entry) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry));
}
