import { ConflictError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import type { Kernel } from '../kernel.js';
import { TURN_ROLLBACK, type TurnRollback } from './snapshot-service.js';

/**
 * Undoes an agent turn's writes through the snapshots plugin and records a `rollback` entry in the
 * session; shared by `POST …/turns/{turnId}/rollback` and `quire chat`'s /undo.
 */
export async function undoTurn(kernel: Kernel, sessionId: string, turnId: string, force: boolean, by: string): Promise<Awaited<ReturnType<TurnRollback['rollbackTurn']>> & { revision: number }> {
  if (kernel.turns.isRunning(sessionId)) throw new ConflictError('CONFLICT', 'the session is running a turn', { details: { reason: 'running' } });
  if (!kernel.container.isRegistered(TURN_ROLLBACK, true)) throw new NotFoundError('ACTION_NOT_FOUND', 'rolling back a turn needs the snapshots plugin, which is not active');
  const stored = await kernel.sessions.readStored(sessionId);
  const outcome = await kernel.container.resolve<TurnRollback>(TURN_ROLLBACK).rollbackTurn(sessionId, turnId, force);
  const entry = { id: newId(), type: 'rollback', turnID: turnId, ...outcome, by, timestamp: new Date().toISOString() };
  const saved = await kernel.sessions.save({ id: sessionId, entries: [...stored.entries, entry], expectedRevision: stored.revision });
  return { ...outcome, revision: saved.revision };
}
