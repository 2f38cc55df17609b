import { createToken } from '../tokens.js';

/**
 * Takes a workspace snapshot before the agent's first write in a turn (DESIGN.md §5). Provided by the
 * snapshots plugin; only a native plugin may provide it (like every `agent.*` and `gate.*` capability).
 */
export interface SnapshotService {
  snapshot(request: { sessionId: string; turnId: string; memo: string }): Promise<{ id: string }>;
}

export const SNAPSHOT_SERVICE = createToken<SnapshotService>('agent.snapshots');

/** The result of undoing an agent's turn. */
export interface TurnRollbackOutcome {
  mode: 'restore' | 'blocks';
  conflicts: { path: string; id?: string }[];
  undone: { path: string; blocks: number }[];
}

/** Undoes one agent turn's changes to the notes; provided by the snapshots plugin. */
export interface TurnRollback {
  /** `only`: the paths an earlier undo of the turn left as conflicts; an undo again goes to those alone. */
  rollbackTurn(sessionId: string, turnId: string, force: boolean, only?: readonly string[]): Promise<TurnRollbackOutcome>;
}

export const TURN_ROLLBACK = createToken<TurnRollback>('agent.turn-rollback');
