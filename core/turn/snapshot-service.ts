import { createToken } from '../tokens.js';

/**
 * Takes a workspace snapshot before the agent's first write in a turn (DESIGN.md §5). Provided by the
 * snapshots plugin; only a native plugin may provide it (like every `agent.*` and `gate.*` capability).
 */
export interface SnapshotService {
  snapshot(request: { sessionId: string; turnId: string; memo: string }): Promise<{ id: string }>;
}

export const SNAPSHOT_SERVICE = createToken<SnapshotService>('agent.snapshots');
