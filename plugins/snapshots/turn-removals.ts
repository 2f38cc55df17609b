/** Removals and moves remembered at most (the oldest go first): enough for the turns running at once. */
const CHANGES_KEPT = 10_000;
/** Turns remembered at most: a turn that never takes its end snapshot (a crash) is dropped first. */
const TURNS_TRACKED = 64;

interface Gone {
  at: number;
  by: string;
  /** The document's path, or, for a move, also its folder of child documents (ending in `/`). */
  paths: string[];
}

/**
 * Who removed or moved documents while a turn ran, from the blocks plugin's notice before each change:
 * a snapshot says what is gone, not who took it away. A turn's undo leaves alone what someone else (a
 * person, another session) removed or moved meanwhile; what the turn itself did is undone as before.
 */
export class OthersRemovals {
  private readonly changes: Gone[] = [];
  private readonly started = new Map<string, number>();

  /** Before a document is removed or moved: `path` its data/-relative file, `by` the caller. */
  note(by: string, op: 'remove' | 'move', path: string): void {
    this.changes.push({ at: Date.now(), by, paths: op === 'move' ? [path, `${path.replace(/\.json$/, '')}/`] : [path] });
    if (this.changes.length > CHANGES_KEPT) this.changes.splice(0, this.changes.length - CHANGES_KEPT);
  }

  /** A turn (`agent:<session>/<turn>`) took its first snapshot: what others remove from now on is noted for it. */
  turnStarted(turn: string): void {
    this.started.set(turn, Date.now());
    if (this.started.size > TURNS_TRACKED) this.started.delete(this.started.keys().next().value!);
  }

  /** At the turn's end: the paths (and folders, ending in `/`) others removed or moved since it started. */
  take(turn: string): string[] | undefined {
    const since = this.started.get(turn);
    this.started.delete(turn);
    if (since === undefined) return undefined;
    const own = `${turn}/`;
    return [...new Set(this.changes.filter((change) => change.at >= since && !change.by.startsWith(own)).flatMap((change) => change.paths))].sort();
  }
}

/** Whether a path is one of these, or lies in one of their folders. */
export function isAmong(path: string, gone: readonly string[]): boolean {
  return gone.some((entry) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry));
}
