import type { ActiveTurn } from '../session/session-types.js';
import { compact, isReusable, MAX_SUMMARY_REQUESTS, parseCompaction, scopeOf, withSummary, type CompactionState } from './compaction.js';
import { estimateContext, inputBudget } from './compaction-tokens.js';
import type { ModelMessage, ModelRequest, ModelToolSpec } from './model-provider.js';
import { retryDelay, waitOrAbort } from './retry-policy.js';
import { streamRound, type RoundResult } from './round-stream.js';
import { CompactionError, type SummaryRequester } from './summary-pieces.js';
import type { TurnDependencies, TurnRequest } from './turn-loop.js';
import { withholdLocalOnly } from './egress-filter.js';

/** A summary request that sends nothing for this long is given up (REFERENCE.md §6: two minutes). */
const SUMMARY_TIMEOUT_MS = 120_000;

/** A turn's compaction: the summary in use, and what the turn spent and learnt on the way. */
export interface CompactionBox {
  state: CompactionState | undefined;
  /** Summary requests made in this turn, retries included (at most MAX_SUMMARY_REQUESTS). */
  requests: number;
  /** The estimate of the last request sent, and the provider's count over it: estimates are scaled by it. */
  lastEstimate: number;
  scale: number;
}

/** The box a turn starts with: the session's stored summary, if it reads as one (validity is checked per round). */
export async function loadCompaction(deps: TurnDependencies, sessionId: string): Promise<CompactionBox> {
  const stored = await deps.sessions.readCompaction(sessionId).catch(() => undefined);
  return { state: parseCompaction(stored), requests: 0, lastEstimate: 0, scale: 1 };
}

/**
 * The messages to send this round: the whole history, or, when it would pass 90% of the input budget
 * (or an overflow error forced it), a summary in place of its older part (REFERENCE.md §6). The stored
 * transcript is never changed; a summary is kept for the session and reused while what it covers is
 * unchanged. Throws a CompactionError when the turn cannot go on.
 */
export async function contextFor(deps: TurnDependencies, request: TurnRequest, turn: ActiveTurn, box: CompactionBox, messages: ModelMessage[], head: ModelMessage[],
  tools: readonly ModelToolSpec[], forced: boolean): Promise<ModelMessage[]> {
  const { contextLimit, maxOutputTokens } = deps.settings;
  // A summary a model on this machine wrote may hold local-only notes: one off it never reuses it, even
  // of the same protocol and model name (a local server and a hosted one), and writes its own.
  const scope = request.egress?.egress === true ? `${scopeOf(request.provider)} off this machine` : scopeOf(request.provider);
  const previous = isReusable(box.state, messages, scope) ? box.state : undefined;
  const history = previous ? withSummary(messages, previous) : messages;
  const current = [...head, ...history];
  if (!contextLimit) {
    if (forced) throw new CompactionError('COMPACTION_FAILED', 'the model reported its context is full, and its context size is not configured, so nothing can be summarised safely', false);
    return current;
  }
  const budget = inputBudget(contextLimit, maxOutputTokens);
  // The history as it leaves: results withheld from a model off this machine take a marker's room, and the
  // provider's count (which corrects the estimate, box.scale) is of what it was sent.
  const egress = request.egress;
  const sent = (part: readonly ModelMessage[]) => (egress?.egress ? withholdLocalOnly(part, egress.localOnly()).messages : part);
  box.lastEstimate = estimateContext(head, sent(history), tools);
  if (!forced && box.lastEstimate * box.scale <= 0.9 * budget) return current;
  let made: Awaited<ReturnType<typeof compact>>;
  try {
    made = await compact(summaryRequester(deps, request, box), {
      scope, messages, head, tools, previous, contextLimit, target: 0.75 * budget, scale: box.scale,
      ...(egress?.egress ? { outgoing: (part: readonly ModelMessage[]) => withholdLocalOnly(part, egress.localOnly()).messages } : {}),
    });
  } catch (error) {
    if (error instanceof CompactionError && error.kept !== undefined) {
      await keep(deps, request, turn, box, error.kept);
      error.message += `; the summary of the first ${error.kept.state.coveredCount} messages is kept, and the next turn goes on from there`;
    }
    // Ahead of the limit, a passing failure is no reason to stop while the request still fits; a
    // refused key or an invalid request is (the same request with the whole history fails the same way).
    const fits = box.lastEstimate * box.scale <= budget;
    if (!forced && fits && error instanceof CompactionError && error.transient) return current;
    throw error;
  }
  await keep(deps, request, turn, box, made);
  const summarised = withSummary(messages, made.state);
  box.lastEstimate = estimateContext(head, sent(summarised), tools);
  return [...head, ...summarised];
}

/** A summary made in this turn: in use from now on, counted, and kept for later turns. */
async function keep(deps: TurnDependencies, request: TurnRequest, turn: ActiveTurn, box: CompactionBox, made: { state: CompactionState; promptTokens: number; completionTokens: number }): Promise<void> {
  box.state = made.state;
  turn.promptTokens += made.promptTokens;
  turn.completionTokens += made.completionTokens;
  await deps.sessions.saveCompaction(request.sessionId, made.state)
    .catch((error: unknown) => deps.log.warn('the compaction summary could not be kept for later turns', { error: String(error) }));
}

/**
 * Sends summary requests with the turn's retry policy; every attempt counts against the turn's cap,
 * which ends the compaction when reached.
 */
function summaryRequester(deps: TurnDependencies, request: TurnRequest, box: CompactionBox): SummaryRequester {
  const quiet = { onText: () => undefined, onReasoning: () => undefined };
  return async (summaryRequest: ModelRequest): Promise<RoundResult> => {
    for (let attempt = 1; ; attempt++) {
      if (box.requests >= MAX_SUMMARY_REQUESTS) throw new CompactionError('COMPACTION_FAILED', `summarising the history needed more than ${MAX_SUMMARY_REQUESTS} requests in this turn`, true);
      box.requests++;
      const result = await streamRound(request.provider, summaryRequest, request.signal, quiet, Math.min(deps.settings.idleTimeoutMs, SUMMARY_TIMEOUT_MS));
      if (result.error === undefined || result.cancelled || request.signal.aborted) return result;
      // Nothing of a summary reaches the person, so a request is repeated even after text arrived.
      const delay = retryDelay(result.error, attempt, deps.settings.retry);
      if (delay === undefined) return result;
      await waitOrAbort(delay, request.signal);
      // Stopped during the wait: no further request is checked against the budgets (its hold outlived it).
      if (request.signal.aborted) return { ...result, error: undefined, cancelled: true };
    }
  };
}
