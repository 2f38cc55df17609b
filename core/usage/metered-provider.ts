import type { BudgetLimit, Budgets } from '../config/kernel-config.js';
import { ModelError, wrapProvider, type ModelEvent, type ModelProvider, type ModelRequest } from '../turn/model-provider.js';
import { costOf, totalTokens, worstCaseCost, type ModelPrice } from './prices.js';
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
  // Each request's worst case, held from its check until its stream ends (see InFlight). Requests of one
  // turn go one at a time, each checked just before it streams: the next stream takes the oldest hold.
  // (Not keyed by the request: a wrapper such as the local-only filter passes each call its own copy.)
  const held: (() => void)[] = [];
  return wrapProvider(provider, {
    // Before the stream (and its idle watchdog): the person may take minutes to answer a budget question.
    async beforeRequest(request: ModelRequest, signal: AbortSignal): Promise<void> {
      for (;;) {
        const overrun = checkBudgets(context, model, request, waived);
        // In the same turn of the event loop as the check: a request checked at the same moment elsewhere counts it.
        if (!overrun) return void held.push(holdWorstCase(context, model, request, signal));
        if (signal.aborted || !context.askToExceed || !(await context.askToExceed(overrun))) refuse(overrun);
        waived.add(overrun.scope);
      }
    },
    // streamRound, the one caller of stream, runs beforeRequest first: the budgets are not read twice.
    stream: (request: ModelRequest, signal: AbortSignal) => meteredStream(provider, context, model, request, signal, held.shift()),
  });
}

/** Longest a request's worst case is held: past it, a stream that never ended (a provider deaf to its signal) holds nothing. */
const MAX_HOLD_MS = 30 * 60_000;

/**
 * Holds a request's worst case until the returned release runs: at the end of its stream, when the
 * turn stops before the stream began (nothing was sent), or after MAX_HOLD_MS.
 */
function holdWorstCase(context: MeterContext, model: string, request: ModelRequest, signal: AbortSignal): () => void {
  const unhold = inFlightOf(context.ledger).hold(worstCase(context, model, request));
  const timer = setTimeout(() => release(), MAX_HOLD_MS);
  timer.unref();
  const release = once(() => {
    unhold();
    clearTimeout(timer);
    signal.removeEventListener('abort', release);
  });
  // An abort that came first never fires its listener: the hold would have lasted MAX_HOLD_MS.
  if (signal.aborted) release();
  else signal.addEventListener('abort', release, { once: true });
  return release;
}

/**
 * The provider's stream, its reported usage recorded. Stopped, timed out or broken after the server
 * began to answer, a stream reports no usage (servers do at a clean end) but may be billed: it is
 * recorded as estimated, or budgets undercount every retry.
 */
async function* meteredStream(provider: ModelProvider, context: MeterContext, model: string, request: ModelRequest, signal: AbortSignal, release: (() => void) | undefined): AsyncIterable<ModelEvent> {
  let reported = false;
  let answered = false;
  let outputChars = 0;
  try {
    for await (const event of provider.stream(request, signal)) {
      answered = true;
      if (event.type === 'usage') {
        reported = true;
        record(context, provider.id, model, event);
      } else if (event.type === 'text' || event.type === 'reasoning') outputChars += event.delta.length;
      else if (event.type === 'tool_call_delta') outputChars += event.argumentsDelta.length;
      yield event;
    }
  } finally {
    release?.();
    if (answered && !reported) {
      record(context, provider.id, model, { type: 'usage', promptTokens: context.estimate(request), completionTokens: Math.ceil(outputChars / 4) }, true);
    }
  }
}

/** A request's cost at worst: its prompt and the largest answer it allows. */
function worstCase(context: MeterContext, model: string, request: ModelRequest): Reservation {
  const tokens = context.estimate(request) + (request.maxOutputTokens ?? context.maxOutputTokens ?? ASSUMED_MAX_OUTPUT);
  const output = request.maxOutputTokens ?? context.maxOutputTokens ?? ASSUMED_MAX_OUTPUT;
  const usd = worstCaseCost(tokens - output, output, context.prices()[model]) ?? 0;
  return { tokens, usd, sessionId: context.sessionId, turnId: context.turnId() };
}

/** `at`: usage that happened then (one the ledger could not record), counted only in the day and month holding it. */
interface Reservation { tokens: number; usd: number; sessionId: string; turnId: string | undefined; at?: string }

/**
 * Requests checked against the budgets and not yet recorded, per ledger (one per workspace): their
 * usage arrives at the end of their stream, minutes later, and turns of several sessions run at once.
 * Each check counts the others' worst cases, so five turns starting together cannot all pass a day's
 * budget that has room for one.
 */
class InFlight {
  private readonly held = new Set<Reservation>();

  hold(reservation: Reservation): () => void {
    this.held.add(reservation);
    return () => { this.held.delete(reservation); };
  }

  /** The worst cases held in a scope (day and month: all of them). */
  within(scope: 'turn' | 'session' | 'day' | 'month', sessionId: string, turnId: string | undefined, since?: string): { tokens: number; usd: number } {
    let tokens = 0;
    let usd = 0;
    for (const reservation of this.held) {
      if (since !== undefined && reservation.at !== undefined && reservation.at < since) {
        // Past the month it happened in, usage not recorded counts in no budget any more.
        if (scope === 'month') this.held.delete(reservation);
        continue;
      }
      if (scope === 'session' && reservation.sessionId !== sessionId) continue;
      if (scope === 'turn' && (reservation.sessionId !== sessionId || reservation.turnId !== turnId)) continue;
      tokens += reservation.tokens;
      usd += reservation.usd;
    }
    return { tokens, usd };
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

const inFlight = new WeakMap<UsageLedger, InFlight>();

function inFlightOf(ledger: UsageLedger): InFlight {
  let found = inFlight.get(ledger);
  if (!found) inFlight.set(ledger, found = new InFlight());
  return found;
}

function record(context: MeterContext, providerId: string, model: string, event: Extract<ModelEvent, { type: 'usage' }>, estimated = false): void {
  const turnId = context.turnId();
  try {
    recordIn(context, providerId, model, event, turnId, estimated);
  } catch {
    // The answer was paid for and arrives all the same; the ledger's own failure (a full disk) must not end
    // the turn. It still counts against the budgets, held for the life of the kernel: dropped, every
    // request after it went unrecorded and no budget ever tripped.
    const counts = { input: event.promptTokens, cachedInput: event.cachedTokens ?? 0, output: event.completionTokens, reasoning: event.reasoningTokens ?? 0 };
    inFlightOf(context.ledger).hold({ tokens: totalTokens(counts), usd: costOf(counts, context.prices()[model]) ?? 0, sessionId: context.sessionId, turnId, at: new Date().toISOString() });
  }
}

function recordIn(context: MeterContext, providerId: string, model: string, event: Extract<ModelEvent, { type: 'usage' }>, turnId: string | undefined, estimated: boolean): void {
  context.ledger.record({
    kind: 'model', provider: providerId, model, sessionId: context.sessionId, ...(turnId !== undefined ? { turnId } : {}),
    input: event.promptTokens, cachedInput: event.cachedTokens ?? 0, output: event.completionTokens, reasoning: event.reasoningTokens ?? 0,
    ...(estimated ? { estimated: true } : {}),
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
  // The agent's model requests only: an embedder's indexing (a reindex of a large workspace, or an
  // embedding model without a price) refused every turn of the day though the agent had spent nothing.
  const scopes: [BudgetOverrun['scope'], BudgetLimit | undefined, UsageScope | undefined][] = [
    ['turn', budgets.turn, turnId !== undefined ? { kind: 'model', sessionId: context.sessionId, turnId } : undefined],
    ['session', budgets.session, { kind: 'model', sessionId: context.sessionId }],
    ['day', budgets.day, { kind: 'model', since: startOfDay(now) }],
    ['month', budgets.month, { kind: 'model', since: startOfMonth(now) }],
  ];
  for (const [name, limit, scope] of scopes) {
    if (!limit || waived.has(name)) continue;
    const over = (message: string): BudgetOverrun => ({ scope: name, limit, message });
    const spent = scope ? context.ledger.total(scope) : undefined;
    // Requests sent and not yet recorded count at their worst (see InFlight).
    const pending = inFlightOf(context.ledger).within(name, context.sessionId, turnId, scope?.since);
    const pendingNote = pending.tokens > 0 ? ' (requests still answering counted at their largest)' : '';
    if (limit.tokens !== undefined) {
      // Without a bound on the answer, the same assumption as a money budget's.
      const output = maxOutput ?? ASSUMED_MAX_OUTPUT;
      const used = (spent ? totalTokens(spent) : 0) + pending.tokens;
      const worst = used + prompt + output;
      if (worst > limit.tokens) return over(`${used} tokens spent${pendingNote}, and this request may take ${prompt + output} more (${prompt} in, up to ${output} out${maxOutput === undefined ? ', assumed: no maxOutputTokens is set' : ''}): over the ${name} budget of ${limit.tokens} tokens`);
    }
    if (limit.usd !== undefined) {
      const request = worstCaseCost(prompt, maxOutput ?? ASSUMED_MAX_OUTPUT, price);
      if (request === null || (spent && spent.cost === null)) {
        return over(`the price of ${request === null ? `model '${model}'` : 'some of the usage in this scope'} is unknown (usage.prices in quire.json), so the ${name} budget of $${limit.usd} cannot be kept`);
      }
      const used = (spent?.cost ?? 0) + pending.usd;
      if (used + request! > limit.usd) return over(`$${used.toFixed(4)} spent${pendingNote}, and this request may cost up to $${request!.toFixed(4)}: over the ${name} budget of $${limit.usd}`);
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
