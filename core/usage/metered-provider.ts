import type { BudgetLimit, Budgets } from '../config/kernel-config.js';
import { ModelError, wrapProvider, type ModelEvent, type ModelProvider, type ModelRequest } from '../turn/model-provider.js';
import { costOf, totalTokens, type ModelPrice } from './prices.js';
import type { UsageLedger, UsageRow, UsageScope } from './usage-ledger.js';

export interface MeterContext {
  ledger: UsageLedger;
  budgets: Budgets;
  prices: () => Readonly<Record<string, ModelPrice>>;
  sessionId: string;
  /** The turn's id once it has one (the turn loop names it after the provider is made). */
  turnId: () => string | undefined;
  /** The request's prompt tokens, counted with compaction's tokenizer. */
  estimate: (request: ModelRequest) => number;
  /** The answer's bound when the request sets none (quire.json agent.maxOutputTokens or the model's). */
  maxOutputTokens?: number;
  /** After each recorded request: the turn's running total. */
  onRecorded?: (turn: UsageRow) => void;
  /**
   * With budgets.whenExceeded `ask`: puts the overrun to the person; true lets this scope's budget go
   * for the rest of the turn. Absent: the request is refused.
   */
  askToExceed?: (exceeded: BudgetOverrun) => Promise<boolean>;
}

/** A budget a request would pass, as the person is shown it. */
export interface BudgetOverrun {
  scope: 'turn' | 'session' | 'day' | 'month';
  limit: BudgetLimit;
  message: string;
}

/** Without a bound on the answer, a money budget assumes this many output tokens (the largest answer common models give). */
const ASSUMED_MAX_OUTPUT = 32_000;

/**
 * The provider as a turn uses it: before every request (rounds, retries, compaction) the request's
 * cost is estimated (its prompt counted, plus the largest answer it allows) and checked against each
 * budget with what is already spent in that scope; one it would pass is not sent (ModelError
 * `budget_exceeded`). Every usage the server reports is recorded in the ledger.
 */
export function meteredProvider(provider: ModelProvider, context: MeterContext): ModelProvider {
  const model = provider.model ?? provider.id;
  // Budgets the person let this turn go past.
  const waived = new Set<BudgetOverrun['scope']>();
  return wrapProvider(provider, {
    // Before the stream (and its idle watchdog): the person may take minutes to answer a budget question.
    async beforeRequest(request: ModelRequest, signal: AbortSignal): Promise<void> {
      for (;;) {
        const overrun = checkBudgets(context, model, request, waived);
        if (!overrun) return;
        if (signal.aborted || !context.askToExceed || !(await context.askToExceed(overrun))) refuse(overrun);
        waived.add(overrun.scope);
      }
    },
    // streamRound, the one caller of stream, runs beforeRequest first: the budgets are not read twice.
    async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
      for await (const event of provider.stream(request, signal)) {
        if (event.type === 'usage') record(context, provider.id, model, event);
        yield event;
      }
    },
  });
}

function record(context: MeterContext, providerId: string, model: string, event: Extract<ModelEvent, { type: 'usage' }>): void {
  const turnId = context.turnId();
  try {
    recordIn(context, providerId, model, event, turnId);
  } catch {
    // The answer was paid for and arrives all the same; the ledger's own failure (a full disk) must not end the turn.
  }
}

function recordIn(context: MeterContext, providerId: string, model: string, event: Extract<ModelEvent, { type: 'usage' }>, turnId: string | undefined): void {
  context.ledger.record({
    kind: 'model', provider: providerId, model, sessionId: context.sessionId, ...(turnId !== undefined ? { turnId } : {}),
    input: event.promptTokens, cachedInput: event.cachedTokens ?? 0, output: event.completionTokens, reasoning: event.reasoningTokens ?? 0,
  });
  if (turnId !== undefined) context.onRecorded?.(context.ledger.total({ sessionId: context.sessionId, turnId }));
}

/** The first budget this request could pass, or undefined. */
function checkBudgets(context: MeterContext, model: string, request: ModelRequest, waived: ReadonlySet<BudgetOverrun['scope']>): BudgetOverrun | undefined {
  const { budgets } = context;
  if (!budgets.turn && !budgets.session && !budgets.day && !budgets.month) return undefined;
  const prompt = context.estimate(request);
  const maxOutput = request.maxOutputTokens ?? context.maxOutputTokens;
  const price = context.prices()[model];
  const now = new Date();
  const turnId = context.turnId();
  const scopes: [BudgetOverrun['scope'], BudgetLimit | undefined, UsageScope | undefined][] = [
    ['turn', budgets.turn, turnId !== undefined ? { sessionId: context.sessionId, turnId } : undefined],
    ['session', budgets.session, { sessionId: context.sessionId }],
    ['day', budgets.day, { since: startOfDay(now) }],
    ['month', budgets.month, { since: startOfMonth(now) }],
  ];
  for (const [name, limit, scope] of scopes) {
    if (!limit || waived.has(name)) continue;
    const over = (message: string): BudgetOverrun => ({ scope: name, limit, message });
    const spent = scope ? context.ledger.total(scope) : undefined;
    if (limit.tokens !== undefined) {
      // Without a bound on the answer, the same assumption as a money budget's.
      const output = maxOutput ?? ASSUMED_MAX_OUTPUT;
      const worst = (spent ? totalTokens(spent) : 0) + prompt + output;
      if (worst > limit.tokens) return over(`${spent ? totalTokens(spent) : 0} tokens spent, and this request may take ${prompt + output} more (${prompt} in, up to ${output} out${maxOutput === undefined ? ', assumed: no maxOutputTokens is set' : ''}): over the ${name} budget of ${limit.tokens} tokens`);
    }
    if (limit.usd !== undefined) {
      const request = costOf({ input: prompt, cachedInput: 0, output: maxOutput ?? ASSUMED_MAX_OUTPUT, reasoning: 0 }, price);
      if (request === null || (spent && spent.cost === null)) {
        return over(`the price of ${request === null ? `model '${model}'` : 'some of the usage in this scope'} is unknown (usage.prices in quire.json), so the ${name} budget of $${limit.usd} cannot be kept`);
      }
      const total = (spent?.cost ?? 0) + request!;
      if (total > limit.usd) return over(`$${(spent?.cost ?? 0).toFixed(4)} spent, and this request may cost up to $${request!.toFixed(4)}: over the ${name} budget of $${limit.usd}`);
    }
  }
  return undefined;
}

function refuse(overrun: BudgetOverrun): never {
  throw new ModelError('budget_exceeded', `The ${overrun.scope} budget would be exceeded: ${overrun.message}. The request was not sent; raise the limit in quire.json (budgets.${overrun.scope}) to go on.`);
}

function startOfDay(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

function startOfMonth(now: Date): string {
  return `${now.toISOString().slice(0, 7)}-01T00:00:00.000Z`;
}
