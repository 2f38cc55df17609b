import { join } from 'node:path';
import { isKernelError } from '../errors.js';
import type { DenyRule } from '../config/kernel-config.js';
import type { ConfirmationStore } from '../gate/confirmation-store.js';
import { denyRuleMatches } from '../gate/decide.js';
import { newId } from '../ids.js';
import { deepFreeze } from '../session/json-values.js';
import type { Logger } from '../log.js';
import type { ActionPipeline } from '../pipeline/action-pipeline.js';
import type { ActionRegistry } from '../registry/action-registry.js';
import type { FileSessionStore } from '../session/session-store.js';
import type { ActiveTurn, SessionEntry, ToolCallRecord } from '../session/session-types.js';
import { DraftCheckpoints } from './draft-checkpoints.js';
import { DoomLoopTracker, type DoomVerdict } from './doom-loop.js';
import { toModelMessages, toolMessage } from './model-messages.js';
import { askToRelease, type ReleaseContext } from './release.js';
import { notebooksSeen, type EgressPolicy } from './egress-filter.js';
import { ModelError, type ModelMessage, type ModelProvider, type ModelRequest, type ModelToolSpec } from './model-provider.js';
import { streamRound, type RoundResult } from './round-stream.js';
import { contextFor, loadCompaction, type CompactionBox } from './context-window.js';
import { CompactionError } from './summary-pieces.js';
import { categoryOf, retryDelay, waitOrAbort, type RetrySettings, errorCodeOf } from './retry-policy.js';
import type { SnapshotService } from './snapshot-service.js';
import { runBatch, type BatchContext } from './tool-batch.js';
import type { TurnEvent } from './turn-events.js';
import { QUESTION_TOOL, type QuestionBoard } from './questions.js';

/** Memos of the two snapshots of a writing turn (the first is taken by the tool batch). */
export const TURN_START_MEMO = 'agent auto snapshot';
export const TURN_END_MEMO = 'agent turn end';

export interface TurnDependencies {
  sessions: FileSessionStore;
  questions: QuestionBoard;
  pipeline: ActionPipeline;
  registry: ActionRegistry;
  confirmations: ConfirmationStore;
  /** quire.json's gate.deny: what they close everywhere is never offered to the model. */
  denyRules: readonly DenyRule[];
  snapshots(): SnapshotService | undefined;
  sessionsDir: string;
  log: Logger;
  settings: {
    maxToolRounds: number; requireSnapshot: boolean; confirmTimeoutMs: number; idleTimeoutMs: number; retry: RetrySettings;
    /** The model's context window in tokens; without it nothing is compacted ahead of an overflow error. */
    contextLimit?: number;
    maxOutputTokens?: number;
    /** A tool result holding local-only notes, with a model off this machine: ask the person, or withhold it. */
    localOnlyResults?: 'ask' | 'withhold';
  };
}

export interface TurnRequest {
  sessionId: string;
  message: string;
  /** The client's id for this message, kept on its entry: the same message sent again is refused (routes/sessions.ts). */
  messageId?: string;
  provider: ModelProvider;
  /** Where requests go and what must not (egress-filter.ts); absent: nothing is held back. */
  egress?: EgressPolicy;
  /** Rebuilt every round from the tools of that round (see system-prompt.ts). */
  systemPrompt: (tools: readonly ModelToolSpec[]) => string;
  signal: AbortSignal;
}

export interface TurnOutcome {
  turnID: string;
  state: 'finished' | 'interrupted';
}

/**
 * The tools the model may call this round: every action the registry offers the agent, less those a
 * deny rule closes everywhere (one without a notebook) and those that cannot work now (a semantic
 * search with no embedder selected). Offering them would only invite calls that fail; a rule for one
 * notebook leaves the action open for the others.
 */
export function toolSpecs(registry: ActionRegistry, denyRules: readonly DenyRule[]): ModelToolSpec[] {
  const closed = denyRules.filter((rule) => rule.notebook === undefined);
  return registry.list()
    .filter((entry) => !closed.some((rule) => denyRuleMatches(rule, { plugin: entry.pluginId, tool: entry.tool, action: entry.action, ...(entry.externalName !== undefined ? { externalName: entry.externalName } : {}) })))
    .filter((entry) => entry.spec.personOnly !== true && entry.unavailable?.() === undefined)
    .map((entry) => ({ name: entry.wireName, description: entry.spec.description, inputSchema: entry.spec.input }));
}

/**
 * One agent turn (REFERENCE.md §5): append the person's message, begin the runtime turn, then model
 * rounds until an answer without tool calls; each round's calls run in order through the pipeline's
 * gate. The runtime turn is saved around every call, and the turn is committed to session.json when it
 * ends, finished or interrupted.
 */
export async function runTurn(deps: TurnDependencies, request: TurnRequest, emit: (event: TurnEvent) => void): Promise<TurnOutcome> {
  const { sessions } = deps;
  const { sessionId } = request;
  // A turn that ended but was never committed (its commit failed, or the kernel stopped) is committed first.
  const session = await sessions.commitEndedTurn(sessionId);
  const userEntry: SessionEntry = { id: newId(), type: 'user', content: request.message, timestamp: new Date().toISOString(), ...(request.messageId !== undefined ? { messageId: request.messageId } : {}) };
  const base = await sessions.save({ id: sessionId, entries: [...session.entries, userEntry], expectedRevision: session.revision });
  const turnID = newId();
  sessions.setStreaming(sessionId, true);
  let state: 'finished' | 'interrupted' = 'interrupted';
  // `done` closes what `turn` opened: a turn that never began is answered by the caller's error alone.
  let announced = false;
  try {
    let turn: ActiveTurn;
    try {
      turn = await sessions.beginTurn(sessionId, { turnID, userEntryID: userEntry.id, baseRevision: base.revision });
    } catch (error) {
      // The message must not stay behind unanswered: the next turn would add a second one in a row.
      await sessions.save({ id: sessionId, entries: session.entries, expectedRevision: base.revision }).catch(() => undefined);
      throw error;
    }
    emit({ type: 'turn', turnID });
    announced = true;
    try {
      state = await rounds(deps, request, turn, toModelMessages(base.session.entries), emit);
    } catch (error) {
      // Whatever went wrong, the turn ends interrupted and is committed: the session must not stay blocked.
      // A kernel error keeps its own code (a full disk is DISK_FULL, not INTERNAL).
      emit({ type: 'error', turnID, code: isKernelError(error) ? error.code : 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
    }
    await snapshotTurnEnd(deps, sessionId, turn);
    const ended = state;
    // Until it is committed, the turn has not finished for a client (a failing finalize ends here too).
    state = 'interrupted';
    await sessions.finalizeTurn(sessionId, turnID, ended);
    state = ended;
    sessions.setStreaming(sessionId, false);
    // Not saved to the session (kept, and committed before the next turn): not 'finished' to a client.
    if (!await commitWithRetry(deps, sessionId, base.session.entries, turnID, emit)) state = 'interrupted';
    return { turnID, state };
  } catch (error) {
    if (!announced) throw error;
    // After the turn was announced (its ending failed to save: a full disk), said before `done`, which is last.
    emit({ type: 'error', turnID, code: isKernelError(error) ? error.code : 'INTERNAL', message: error instanceof Error ? error.message : String(error) });
    return { turnID, state: 'interrupted' };
  } finally {
    sessions.setStreaming(sessionId, false);
    if (announced) emit({ type: 'done', turnID, state });
  }
}

/**
 * A turn that wrote (it has a snapshot from before its first write) gets a second one at its end, so
 * that rolling it back later can tell its own changes from a person's edits made since.
 */
async function snapshotTurnEnd(deps: TurnDependencies, sessionId: string, turn: ActiveTurn): Promise<void> {
  const service = deps.snapshots();
  if (!service || turn.snapshotIDs.length === 0) return;
  try {
    // Bookkeeping for a later rollback, not the turn's snapshot: kept out of the session's snapshot entries.
    const { id } = await service.snapshot({ sessionId, turnId: turn.turnID, memo: TURN_END_MEMO });
    turn.endSnapshotID = id;
    await deps.sessions.saveTurn(sessionId, turn);
  } catch (error) {
    deps.log.warn('the snapshot at the end of a turn failed; undoing this turn will go by the stamps on its blocks, and what they cannot tell will be a conflict', { error: String(error) });
  }
}

/** Commits the turn; a commit can be repeated safely, so a failed one is tried once more. */
/** Commits the turn, trying twice; says whether it was saved. */
async function commitWithRetry(deps: TurnDependencies, sessionId: string, entries: SessionEntry[], turnID: string, emit: (event: TurnEvent) => void): Promise<boolean> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      await deps.sessions.save({ id: sessionId, entries, commitTurnID: turnID });
      return true;
    } catch (error) {
      if (attempt === 2) emit({ type: 'error', turnID, code: 'COMMIT_FAILED', message: `the turn could not be saved to the session; it is kept and will be committed before the next turn (${error instanceof Error ? error.message : String(error)})` });
    }
  }
  return false;
}

/** What the rounds of one turn share. */
interface TurnWork {
  deps: TurnDependencies;
  request: TurnRequest;
  turn: ActiveTurn;
  /** The model's view of the history; grows with each round, never written to the session as such. */
  messages: ModelMessage[];
  emit: (event: TurnEvent) => void;
  doom: DoomLoopTracker;
  snapshot: { taken: boolean; ids: string[] };
  compaction: CompactionBox;
  save(): Promise<void>;
}

type Ending = 'finished' | 'interrupted';

async function rounds(deps: TurnDependencies, request: TurnRequest, turn: ActiveTurn, messages: ModelMessage[], emit: (event: TurnEvent) => void): Promise<Ending> {
  const work: TurnWork = {
    deps, request, turn, messages, emit, doom: new DoomLoopTracker(), snapshot: { taken: false, ids: turn.snapshotIDs },
    compaction: await loadCompaction(deps, request.sessionId), save: () => deps.sessions.saveTurn(request.sessionId, turn),
  };
  // Bounded: after maxToolRounds the model gets no tools and must answer; one more round at most.
  for (let round = 0; round <= deps.settings.maxToolRounds; round++) {
    // A cancel that arrived after the last round's calls starts no new request.
    if (request.signal.aborted) return 'interrupted';
    const roundID = `${turn.turnID}_${round}`;
    emit({ type: 'thinking', roundID, phase: round === 0 ? 'analyzing' : 'processing' });
    const tools = round < deps.settings.maxToolRounds ? [...toolSpecs(deps.registry, deps.denyRules), QUESTION_TOOL] : [];
    const result = await modelRound(work, roundID, tools);
    if (result === 'interrupted') return result;
    const ending = await answerOrStop(work, result, roundID, tools);
    if (ending !== undefined) return ending;
    const stopped = await toolRound(work, result, roundID, tools);
    if (stopped !== undefined) return stopped;
  }
  return 'finished';
}

/** One model request (compacting the context first when needed, once more after an overflow error). */
async function modelRound(work: TurnWork, roundID: string, tools: ModelToolSpec[]): Promise<RoundResult | 'interrupted'> {
  const { deps, request, turn, emit, compaction } = work;
  const system: ModelMessage = { role: 'system', content: request.systemPrompt(tools) };
  let forced = false;
  for (;;) {
    let context: ModelMessage[];
    try {
      context = await contextFor(deps, request, turn, compaction, work.messages, [system], tools, forced);
    } catch (error) {
      // A cancel while summarising ends the turn like any cancel: interrupted, no error.
      if (!request.signal.aborted) emit({ type: 'error', turnID: turn.turnID, code: error instanceof CompactionError ? error.code : 'COMPACTION_FAILED', message: error instanceof Error ? error.message : String(error) });
      return 'interrupted';
    }
    // Whose notes a model on this machine has been shown: its answer (and a draft of it) is recorded with them (egress-filter.ts).
    const seen = request.egress?.egress === true ? undefined : notebooksSeen(work.messages);
    if (seen === undefined) delete turn.draftNotebooks;
    else turn.draftNotebooks = seen;
    const draft = new DraftCheckpoints(turn, roundID, work.save);
    const answered = await requestWithRetries(deps, request, { messages: context, tools, ...(deps.settings.maxOutputTokens ? { maxOutputTokens: deps.settings.maxOutputTokens } : {}) }, roundID, emit, draft);
    const result = seen === undefined ? answered : { ...answered, notebooks: seen };
    await draft.end();
    turn.promptTokens += result.promptTokens;
    turn.completionTokens += result.completionTokens;
    // The provider's own count corrects the estimate for the next round (other tokenizers, hidden prompts).
    if (result.promptTokens > 0 && compaction.lastEstimate > 0) compaction.scale = Math.min(4, Math.max(0.25, result.promptTokens / compaction.lastEstimate));
    if (result.error === undefined || forced || result.received || categoryOf(result.error) !== 'context_overflow') return result;
    forced = true;
  }
}

/** Ends the turn when the round failed, was cancelled, answered without tools, or called tools past the bound. */
async function answerOrStop(work: TurnWork, result: RoundResult, roundID: string, tools: ModelToolSpec[]): Promise<Ending | undefined> {
  const { turn, emit } = work;
  if (result.error !== undefined || result.cancelled) {
    // Once anything has arrived the request is never repeated silently: the partial answer stays as a draft.
    turn.draftContent = result.text;
    turn.draftRoundID = roundID;
    await work.save();
    if (result.error !== undefined) emit({ type: 'error', turnID: turn.turnID, code: errorCodeOf(result.error), message: result.error instanceof Error ? result.error.message : String(result.error) });
    return 'interrupted';
  }
  if (result.calls.length > 0 && tools.length > 0) return undefined;
  // Calls made past the round bound never run: the provider's record of them is not kept, or the next
  // request would carry calls without results.
  turn.delta.push({ id: roundID, type: 'assistant', content: result.text, roundID, ...nativeFields(result, result.calls.length === 0), ...notebooksOf(result) });
  await work.save();
  if (result.calls.length === 0) {
    emit({ type: 'usage', promptTokens: turn.promptTokens, completionTokens: turn.completionTokens });
    // Kept, but not taken for a whole answer: it stopped mid-sentence at the output limit.
    if (result.finishReason === 'length') {
      emit({ type: 'error', turnID: turn.turnID, code: 'OUTPUT_LIMIT', message: 'The answer reached the output token limit and was cut off (agent.maxOutputTokens or the model\'s own); it is kept as it is.' });
      return 'interrupted';
    }
    // Stopped by the provider, not finished: said, or an empty or cut answer passed for a whole one.
    if (result.finishReason === 'content_filter') {
      emit({ type: 'error', turnID: turn.turnID, code: 'MODEL_REFUSED', message: 'The provider stopped the answer (a refusal, its content filter or safety rules); what arrived of it is kept.' });
      return 'interrupted';
    }
    if (result.finishReason === 'other' && result.text.trim() === '') {
      emit({ type: 'error', turnID: turn.turnID, code: 'MODEL_STOPPED', message: 'The model ended without an answer, for a reason its provider did not name as a usual one.' });
      return 'interrupted';
    }
    return 'finished';
  }
  // Past the round bound the model was given no tools; calls it makes anyway never run.
  emit({ type: 'error', turnID: turn.turnID, code: 'ROUND_LIMIT', message: `The model kept calling tools after ${work.deps.settings.maxToolRounds} rounds; the turn was stopped.` });
  return 'interrupted';
}

/** An answer's record of whose notes its model had been shown, when it had been shown any. */
function notebooksOf(result: RoundResult): { notebooks?: readonly string[] | 'all' } {
  return result.notebooks === undefined ? {} : { notebooks: result.notebooks };
}

/** What an assistant entry keeps besides its text: the reasoning shown, and the provider's record to replay. */
function nativeFields(result: RoundResult, keepProviderData = true): { reasoningContent?: string; providerData?: unknown } {
  return { ...(result.reasoning !== '' ? { reasoningContent: result.reasoning } : {}), ...(keepProviderData && result.providerData !== undefined ? { providerData: result.providerData } : {}) };
}

/**
 * Whether a tool result holding local-only notes has reached the model: a model on this machine sees
 * every result; one off it only those the person released.
 */
function modelSawLocalOnly(messages: readonly ModelMessage[], policy: EgressPolicy): boolean {
  const localOnly = policy.localOnly();
  if (localOnly.size === 0) return false;
  const holds = (notebooks: readonly string[] | 'all' | undefined) => notebooks === undefined || notebooks === 'all' || notebooks.some((notebook) => localOnly.has(notebook));
  // An earlier answer a model on this machine wrote from such notes may quote them (withheld from one off it).
  return messages.some((message) => (message.role === 'tool' && (!policy.egress || message.released === true) && holds(message.notebooks))
    || (message.role === 'assistant' && !policy.egress && message.notebooks !== undefined && holds(message.notebooks)));
}

function releaseContext(work: TurnWork, roundID: string): ReleaseContext {
  const { deps, request, turn, emit } = work;
  return {
    policy: request.egress!, ask: deps.settings.localOnlyResults !== 'withhold', confirmations: deps.confirmations,
    sessionId: request.sessionId, turnId: turn.turnID, roundId: roundID, confirmTimeoutMs: deps.settings.confirmTimeoutMs,
    signal: request.signal, emit, checkpoint: work.save,
  };
}

/** Runs the round's tool calls, feeds their results back, and applies the doom-loop rule. */
async function toolRound(work: TurnWork, result: RoundResult, roundID: string, tools: ModelToolSpec[]): Promise<Ending | undefined> {
  const { deps, request, turn, emit } = work;
  const records: ToolCallRecord[] = result.calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, state: 'pending', ...(call.providerData !== undefined ? { providerData: call.providerData } : {}) }));
  turn.delta.push({ id: roundID, type: 'assistant', content: result.text, roundID, toolCalls: records, ...nativeFields(result), ...notebooksOf(result) });
  await work.save();
  const context: BatchContext = {
    pipeline: deps.pipeline, registry: deps.registry, confirmations: deps.confirmations, snapshots: deps.snapshots(), requireSnapshot: deps.settings.requireSnapshot,
    confirmTimeoutMs: deps.settings.confirmTimeoutMs, sessionId: request.sessionId, turnId: turn.turnID, roundId: roundID,
    mode: () => deps.sessions.permissionMode(request.sessionId), offered: new Set(tools.map((tool) => tool.name)),
    outputDir: join(deps.sessionsDir, request.sessionId, 'output'), signal: request.signal, emit, checkpoint: work.save,
    snapshotTaken: work.snapshot.taken, snapshotIds: work.snapshot.ids, questions: deps.questions, cutAtLimit: result.finishReason === 'length',
    ...(request.egress ? { localOnlyInContext: () => modelSawLocalOnly(work.messages, request.egress!) } : {}),
  };
  // Each call is recorded with the doom-loop tracker as it finishes; the strongest verdict of the batch wins.
  let verdict = { kind: 'ok' } as DoomVerdict;
  context.afterCall = (record) => {
    const next = recordWithDoomLoop(work.doom, deps.registry, record);
    if (next.kind === 'stop' || (next.kind === 'warn' && verdict.kind === 'ok')) verdict = next;
    return next.kind === 'stop' ? { stop: next.message } : undefined;
  };
  const stop = await runBatch(context, result.calls, records);
  work.snapshot.taken = context.snapshotTaken;
  await work.save();
  // Frozen, like the stored history's: later rounds then count and hash them once (compaction-tokens.ts).
  work.messages.push(deepFreeze({ role: 'assistant', content: result.text, toolCalls: result.calls, ...(result.providerData !== undefined ? { providerData: result.providerData } : {}) }));
  if (!stop && request.egress) await askToRelease(releaseContext(work, roundID), records);
  for (const record of records) work.messages.push(deepFreeze(toolMessage(record)));
  // The round's message is final now: frozen, later checkpoints find it unchanged by identity (journaled-documents.ts).
  deepFreeze(turn.delta.at(-1));
  if (stop) {
    if (stop.reason !== 'cancelled') emit({ type: 'error', turnID: turn.turnID, code: stop.reason.toUpperCase(), message: stop.message });
    return 'interrupted';
  }
  // The batch's last call may have finished despite a cancel: the turn still ends here.
  if (request.signal.aborted) return 'interrupted';
  if (verdict.kind === 'warn') {
    work.messages.push(deepFreeze({ role: 'system', content: verdict.message }));
    turn.warnings = [...(Array.isArray(turn.warnings) ? turn.warnings as string[] : []), verdict.message];
    await work.save();
  }
  return undefined;
}

/**
 * One model request, tried again while nothing has arrived and the error's category allows it, with
 * capped exponential backoff (an abortable wait, announced by a `retry` event).
 */
async function requestWithRetries(deps: TurnDependencies, request: TurnRequest, modelRequest: ModelRequest, roundID: string, emit: (event: TurnEvent) => void, draft: DraftCheckpoints): Promise<RoundResult> {
  const callbacks = { onText: (delta: string) => { emit({ type: 'content', roundID, delta }); draft.add(delta); }, onReasoning: (delta: string) => emit({ type: 'reasoning', roundID, delta }) };
  let silences = 0;
  for (let attempt = 1; ; attempt++) {
    const result = await streamRound(request.provider, modelRequest, request.signal, callbacks, deps.settings.idleTimeoutMs);
    if (result.error === undefined || result.received || request.signal.aborted) return result;
    // Silent after the server took the request: a model thinking without showing it (each new request is
    // billed for that thinking again), or a server stalled behind its headers. Tried once more, not five times.
    if (result.accepted && categoryOf(result.error) === 'timeout' && ++silences >= 2) {
      return { ...result, error: new ModelError('timeout', `${result.error instanceof Error ? result.error.message : String(result.error)} after the server took the request, twice; not repeated again: the model may be thinking without showing it (billed each time; for such models raise agent.idleTimeoutMs), or the server stalled`) };
    }
    const delay = retryDelay(result.error, attempt, deps.settings.retry);
    if (delay === undefined) return result;
    emit({ type: 'retry', roundID, attempt, max: deps.settings.retry.maxRetries, delayMs: Math.round(delay), category: categoryOf(result.error) });
    await waitOrAbort(delay, request.signal);
    // Stopped during the wait: the Stop ends the round here. Going on checked one more request against
    // the budgets, which held its worst case for half an hour, or answered BUDGET_EXCEEDED for a Stop.
    if (request.signal.aborted) return { ...result, error: undefined, cancelled: true };
  }
}

/** Records one finished call with the tracker. */
function recordWithDoomLoop(doom: DoomLoopTracker, registry: ActionRegistry, record: ToolCallRecord): DoomVerdict {
  const entry = registry.get(record.name);
  let input: Record<string, unknown> = {};
  try { input = JSON.parse(String(record.arguments ?? '{}')) as Record<string, unknown>; } catch { /* unparsable arguments count as none */ }
  // An empty result is a failure too: the model learned nothing and will likely try again.
  const succeeded = record.ok === true && !EMPTY_RESULT.test(record.result ?? '');
  return doom.record({ tool: entry?.tool ?? record.name, action: entry?.action ?? '', input, succeeded });
}

const EMPTY_RESULT = /^\[tool_output\]\n\s*(null|""|\[\]|\{\})?\s*\n\[\/tool_output\]$/;
