import { KernelError } from '../errors.js';
import { effectsSaid } from '../gate/effects.js';
import type { Effect, Principal } from '../plugin-api.js';
import type { RegisteredAction } from '../registry/action-registry.js';

/**
 * Who may call an action, answered here for every surface: an administrator (and the agent, which acts
 * for one) anything; a reader only an action without effects that is not marked `adminOnly` (one that
 * reads every notebook, published or not, or the agent's own instructions).
 */
export function checkRole(entry: RegisteredAction, principal: Principal, own: readonly Effect[]): void {
  if (principal.role === 'admin') return;
  if (own.length > 0) {
    throw new KernelError('FORBIDDEN', `role '${principal.role}' may only call actions without effects; ${entry.wireName} has ${effectsSaid(own, entry)}`, { details: { action: entry.wireName, effects: [...own] } });
  }
  if (entry.spec.adminOnly === true) {
    throw new KernelError('FORBIDDEN', `${entry.wireName} is for administrators and the agent: it reads what a reader may not see`, { details: { action: entry.wireName } });
  }
}
