import { ConflictError, NotFoundError, isKernelError } from '../errors.js';
import { newId } from '../ids.js';
import type { Kernel } from '../kernel.js';
import { TURN_ROLLBACK, type TurnRollback } from './snapshot-service.js';

/** Saving the rollback entry is retried this often when the session changed meanwhile. */
const SAVE_ATTEMPTS = 5;

/**
 * Undoes an agent turn's writes through the snapshots plugin and records a `rollback` entry in the
 * session; shared by `POST …/turns/{turnId}/rollback` and `quire chat`'s /undo. No turn of the session
 * can start meanwhile.
 */
export async function undoTurn(kernel: Kernel, sessionId: string, turnId: string, force: boolean, by: string): Promise<Awaited<ReturnType<TurnRollback['rollbackTurn']>> & { revision: number }> {
  if (!kernel.container.isRegistered(TURN_ROLLBACK, true)) throw new NotFoundError('ACTION_NOT_FOUND', 'rolling back a turn needs the snapshots plugin, which is not active');
  await kernel.sessions.readStored(sessionId);
  return kernel.turns.exclusive(sessionId, async () => {
    // A turn the kernel's stop or a failed commit left uncommitted (the one a person most wants undone)
    // is committed first: the rollback's entry could not be saved after the files were put back.
    await kernel.sessions.commitEndedTurn(sessionId);
    // Undone whole already: a second undo took back what was written since (the person's own edit came
    // back as a conflict, and forcing it put the turn's old text over it). One that left conflicts may go again.
    const done = (await kernel.sessions.readStored(sessionId)).entries.findLast((entry) => entry.type === 'rollback' && entry.turnID === turnId);
    if (done !== undefined && Array.isArray(done.conflicts) && done.conflicts.length === 0) {
      throw new ConflictError('CONFLICT', `turn ${turnId} was undone already${typeof done.timestamp === 'string' ? ` (${done.timestamp})` : ''}; undoing it again would take back what was written since`, { details: { reason: 'undone', turnId } });
    }
    // Undone in part: again, only what it left (its conflicts); what it undid may have been written since ('*': it undid nothing).
    const left = Array.isArray(done?.conflicts) ? (done.conflicts as { path?: unknown }[]).map((conflict) => String(conflict.path)) : undefined;
    const only = left === undefined || left.includes('*') ? undefined : [...new Set(left)];
    const outcome = await kernel.container.resolve<TurnRollback>(TURN_ROLLBACK).rollbackTurn(sessionId, turnId, force, only);
    const entry = { id: newId(), type: 'rollback', turnID: turnId, ...outcome, by, timestamp: new Date().toISOString() };
    // The files are rolled back already: the record of it must land even if someone saved meanwhile.
    for (let attempt = 1; ; attempt++) {
      const stored = await kernel.sessions.readStored(sessionId);
      try {
        const saved = await kernel.sessions.save({ id: sessionId, entries: [...stored.entries, entry], expectedRevision: stored.revision });
        return { ...outcome, revision: saved.revision };
      } catch (error) {
        if (!(isKernelError(error) && error.code === 'CONFLICT') || attempt >= SAVE_ATTEMPTS) throw error;
      }
    }
  });
}

