/** Turns remembered at most: a turn that never takes its end snapshot (a crash) is dropped first. */
const TURNS_TRACKED = 64;

/**
 * The documents each turn's own calls removed, by turn (`agent:<session>/<turn>`), from the blocks
 * plugin's notice before each removal: a snapshot says what is gone, not who removed it.
 */
export class TurnRemovals {
  private readonly turns = new Map<string, Set<string>>();

  /** `by` is the caller: `agent:<session>/<turn>/<call>`. */
  note(by: string, path: string): void {
    const turn = by.split('/').slice(0, 2).join('/');
    let paths = this.turns.get(turn);
    if (!paths) {
      paths = new Set();
      this.turns.set(turn, paths);
      if (this.turns.size > TURNS_TRACKED) this.turns.delete(this.turns.keys().next().value!);
    }
    paths.add(path);
  }

  /** The turn's removals, forgotten here once taken (they go into its end snapshot). */
  take(turn: string): string[] {
    const paths = [...(this.turns.get(turn) ?? [])].sort();
    this.turns.delete(turn);
    return paths;
  }
}
