import { KernelError } from '../errors.js';
import type { ActionCall, StopReason } from '../plugin-api.js';

/** The error a call that stopped before doing anything answers with. */
export function stopError(reason: StopReason, what: string): KernelError {
  return reason === 'time_limit'
    ? new KernelError('ACTION_TIMEOUT', `${what} stopped at its time limit`, { details: { stopped: reason } })
    : new KernelError('ACTION_CANCELLED', `${what} was cancelled`, { details: { stopped: reason } });
}

/**
 * A safe point for a handler that has not changed anything yet: throws the stop error when the call
 * must stop. After the first change, return what was done instead (see `stoppedNote`).
 */
export function throwIfStopped(call: Pick<ActionCall, 'stopped'>, what: string): void {
  const reason = call.stopped;
  if (reason !== undefined) throw stopError(reason, what);
}

/** How a partial result says why it ends early: "stopped at the time limit" or "cancelled". */
export function stoppedNote(reason: StopReason): string {
  return reason === 'time_limit' ? 'stopped at the time limit' : 'cancelled';
}
