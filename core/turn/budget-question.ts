import { hashArguments } from '../canonical-json.js';
import type { ConfirmationStore } from '../gate/confirmation-store.js';
import type { BudgetOverrun } from '../usage/metered-provider.js';
import { linkedController } from './linked-signal.js';
import type { TurnEvent } from './turn-events.js';

export interface BudgetQuestionContext {
  confirmations: ConfirmationStore;
  emit: (event: TurnEvent) => void;
  sessionId: string;
  turnId: string;
  confirmTimeoutMs: number;
  signal: AbortSignal;
}

/**
 * budgets.whenExceeded `ask`: a model request that would pass a budget is put to the person (a
 * confirmation of kind `budget`: which budget, its limit, what is spent and what the request may
 * take). Yes lets that budget go for the rest of the turn; no, no answer in time or a cancel stops
 * the turn with BUDGET_EXCEEDED, the request unsent.
 */
export async function askToExceedBudget(context: BudgetQuestionContext, overrun: BudgetOverrun): Promise<boolean> {
  const args = { budget: overrun.scope, limit: overrun.limit, why: overrun.message };
  const confirmation = await context.confirmations.create({
    kind: 'budget', plugin: 'kernel', tool: 'budget', action: 'exceed', wireName: 'exceed_budget',
    arguments: args, argsHash: hashArguments(args), effects: ['externalCost'], destructive: false,
    principal: `agent:${context.sessionId}/${context.turnId}`, sessionId: context.sessionId, ...(context.turnId !== '' ? { turnId: context.turnId } : {}),
  });
  context.emit({ type: 'confirm', roundID: `${context.turnId}_budget`, confirmation });
  const waiting = linkedController(context.signal, context.confirmTimeoutMs > 0 ? context.confirmTimeoutMs : undefined);
  const waited = await context.confirmations.waitForAnswer(confirmation.id, waiting.signal).catch(() => undefined).finally(() => waiting.unlink());
  const answered = waited ?? await context.confirmations.expire(confirmation.id);
  return answered.status === 'approved' && !context.signal.aborted;
}
