import { canonicalJson } from '../canonical-json.js';
import { isKernelError } from '../errors.js';
import type { ConfirmationStore } from '../gate/confirmation-store.js';
import type { SessionMode } from '../gate/decide.js';
import type { ActionPipeline, ExecuteOptions } from '../pipeline/action-pipeline.js';
import { notebooksInResult } from '../pipeline/prepared-call.js';
import type { PreparedCall } from '../pipeline/prepared-call.js';
import type { Principal } from '../plugin-api.js';
import type { ActionRegistry, RegisteredAction } from '../registry/action-registry.js';
import { RESULT_UNKNOWN, type ToolCallRecord } from '../session/session-types.js';
import { linkedController } from './linked-signal.js';
import { prepareToolOutput } from './tool-output.js';
import { QUESTION_TOOL, type Question, type QuestionBoard } from './questions.js';
import type { SnapshotService } from './snapshot-service.js';
import type { StreamedCall } from './round-stream.js';
import { MAX_JSON_DEPTH, pathPastDepth, shortPointer } from '../util/json-depth.js';
import { formatIssues, getKernelAjv, runValidator } from '../schema/ajv.js';
import type { ValidateFunction } from 'ajv';
import type { TurnEvent } from './turn-events.js';

export interface BatchContext {
  pipeline: ActionPipeline;
  /** Whether the model has seen notes of local-only notebooks in this turn's context (see decide.ts). */
  localOnlyInContext?: () => boolean;
  /** Looked up again just before a call runs: what it was prepared against may be gone by then. */
  registry: ActionRegistry;
  confirmations: ConfirmationStore;
  snapshots: SnapshotService | undefined;
  requireSnapshot: boolean;
  confirmTimeoutMs: number;
  sessionId: string;
  turnId: string;
  roundId: string;
  /** Read before every gate decision: a person switching the session back to confirm stops the next write. */
  mode(): Promise<SessionMode>;
  /** The tools offered this round; a call to any other is refused without running. */
  offered: ReadonlySet<string>;
  outputDir: string;
  signal: AbortSignal;
  emit(event: TurnEvent): void;
  /** Saves the turn with the calls as they stand (before and after each call). */
  checkpoint(): Promise<void>;
  /** Whether this turn already took its snapshot; set by the batch when it takes one. */
  snapshotTaken: boolean;
  snapshotIds: string[];
  questions: QuestionBoard;
  /**
   * Told each call as it is finished (the doom-loop rule); true stops the batch there, the calls after
   * it skipped: identical failures ran to the end of a batch before the rule was asked.
   */
  afterCall?(record: ToolCallRecord): { stop: string } | undefined;
  /** The model's answer ended at its output limit: arguments that do not parse were cut off, not malformed. */
  cutAtLimit?: boolean;
}

export interface CallResult {
  ok: boolean;
  output: string;
}

/** Why a batch stopped early: the rest of its calls were skipped and the turn ends interrupted. */
type StopReason = 'snapshot_failed' | 'cancelled' | 'outcome_unknown' | 'doom_loop';

/**
 * Calls run from one answer of the model; those past it are answered "not run" (a degenerate model
 * answered one block_insert 150 times, and all ran, in auto mode or under a grant).
 */
export const MAX_CALLS_PER_ROUND = 64;
export type BatchStop = { reason: StopReason; message: string } | undefined;

/** A confirm timeout of 0 or less means waiting for as long as the turn lasts (REFERENCE.md §5). */
const waitLimit = (ms: number): number | undefined => (ms > 0 ? ms : undefined);

const failure = (code: string, message: string): CallResult => ({ ok: false, output: JSON.stringify({ ok: false, error: { code, message } }) });

const cutOff = (name: string): CallResult => failure('OUTPUT_LIMIT', `Your answer reached its output limit while writing the arguments of ${name}, so they were cut off; it was not run. Write less per call: split long content over several calls`);

/**
 * Runs one round's tool calls in order: validation and the gate (pipeline.prepare), the person's answer
 * when the gate asks for one, the snapshot before the turn's first local write, then the call itself.
 * A failed call becomes a result the model reads; only a failed snapshot or cancellation stops the batch.
 */
export async function runBatch(context: BatchContext, calls: StreamedCall[], records: ToolCallRecord[]): Promise<BatchStop> {
  if (calls.length > MAX_CALLS_PER_ROUND) {
    await skipRest(context, records, MAX_CALLS_PER_ROUND, 'too_many', `Not run: at most ${MAX_CALLS_PER_ROUND} calls of one answer are run (this one had ${calls.length}). Make fewer calls per answer.`);
  }
  const stop = await runCalls(context, calls.slice(0, MAX_CALLS_PER_ROUND), records);
  if (stop) return stop;
  const last = records[Math.min(calls.length, MAX_CALLS_PER_ROUND) - 1];
  const verdict = last ? context.afterCall?.(last) : undefined;
  return verdict ? { reason: 'doom_loop', message: verdict.stop } : undefined;
}

async function runCalls(context: BatchContext, calls: StreamedCall[], records: ToolCallRecord[]): Promise<BatchStop> {
  for (const [i, call] of calls.entries()) {
    const record = records[i]!;
    const previous = i > 0 ? context.afterCall?.(records[i - 1]!) : undefined;
    if (previous) return skipRest(context, records.slice(0, calls.length), i, 'doom_loop', previous.stop);
    if (context.signal.aborted) return skipRest(context, records, i, 'cancelled', 'The turn was cancelled.');
    context.emit({ type: 'tool_call', roundID: context.roundId, toolCallID: call.id, name: call.name, arguments: call.arguments });
    if (call.name === QUESTION_TOOL.name) {
      await finish(context, record, await askPerson(context, call, record));
      continue;
    }
    if (!context.offered.has(call.name)) {
      await finish(context, record, failure('ACTION_NOT_FOUND', `${call.name} is not available in this round; answer with what you have`));
      continue;
    }
    const prepared = prepareCall(context, call, await context.mode());
    if ('result' in prepared) {
      await finish(context, record, prepared.result);
      continue;
    }
    const approved = await approval(context, prepared.call, record);
    if (approved.result) {
      await finish(context, record, approved.result);
      continue;
    }
    if (prepared.call.entry.effects.includes('localWrite') && !context.snapshotTaken) {
      const stop = await takeSnapshot(context);
      if (stop) return skipRest(context, records, i, stop.reason, stop.message);
    }
    const ran = await executeCall(context, prepared.call, record, approved.confirmationId);
    if (ran === 'still_running') {
      return skipRest(context, records, i + 1, 'outcome_unknown',
        `${call.name} did not end cleanly (it passed its time limit without stopping, or its answer was cut off): it may still be running, and what it changed is unknown. The turn stops so that nothing repeats it; check its effects before going on.`);
    }
    if (ran !== 'done') return skipRest(context, records, ran === 'cancelled_before' ? i : i + 1, 'cancelled', 'The turn was cancelled.');
  }
  return undefined;
}

/**
 * A call past its approval and snapshot: marked executing, checked once more (a cancel, its action
 * gone or changed), then run. Says whether the turn was cancelled before the call ran or while it ran.
 */
async function executeCall(context: BatchContext, call: PreparedCall, record: ToolCallRecord, confirmationId: string | undefined): Promise<'done' | 'cancelled_before' | 'cancelled_during' | 'still_running'> {
  record.state = 'executing';
  await context.checkpoint();
  // A cancellation that arrived while the person answered, the snapshot ran or the state was saved stops the call here.
  if (context.signal.aborted) {
    if (confirmationId) await context.confirmations.expire(confirmationId, { evenIfApproved: true });
    return 'cancelled_before';
  }
  const registered = stillRegistered(context.registry, call);
  const current = 'result' in registered ? registered : await judgedAgain(context, registered.call, confirmationId);
  if ('result' in current) {
    // An approval given for what is gone or changed is closed unused: it must not run something else.
    if (confirmationId) await context.confirmations.expire(confirmationId, { evenIfApproved: true });
    await finish(context, record, current.result);
    return 'done';
  }
  let stoppedCleanly = false;
  let mayStillRun = false;
  const result = await context.pipeline.execute(current.call, { ...(confirmationId ? { confirmationId } : {}), ...progressListeners(context, record) })
    .then((value): CallResult => ({ ok: true, output: typeof value === 'string' ? value : JSON.stringify(value ?? null) }),
      (error: unknown): CallResult => {
        // Stopped at a safe point before it changed anything (its error says so, and that it is not still running).
        stoppedCleanly = isKernelError(error) && error.details.stopped !== undefined && error.details.stillRunning !== true;
        mayStillRun = isKernelError(error) && error.details.stillRunning === true;
        // It ran and took effect; only its audit line failed: a success to the model (a failure invited a retry).
        if (isKernelError(error) && error.details.ran === true) return { ok: true, output: JSON.stringify({ ok: true, note: error.message }) };
        return failure(isKernelError(error) ? error.code : 'INTERNAL', error instanceof Error ? error.message : String(error));
      });
  // Stopped by the cancel while it ran, without saying what it did: unknown, as after a crash, and not to be retried.
  if (!result.ok && context.signal.aborted && !stoppedCleanly) {
    await finishUnknown(context, record);
    return 'cancelled_during';
  }
  // Past its time limit and not stopped: unknown too (DESIGN §5), and the turn ends (REFERENCE §5): taken
  // as a plain failure, the model tried it again, another copy running beside the first.
  if (mayStillRun) {
    await finishUnknown(context, record);
    return 'still_running';
  }
  // A native action that failed before it said whose notes it read answered with the kernel's error text,
  // which holds none (counted as every notebook, it withheld the error and marked every later answer).
  const failedNative = !result.ok && !current.call.returned.said && current.call.entry.source === 'native';
  await finish(context, record, result, failedNative ? [] : notebooksInResult(current.call));
  return 'done';
}

/**
 * The person sees a call's progress in the turn's events: the job a long action runs as (kept in the
 * call's record, so the session names it), and each progress report.
 */
function progressListeners(context: BatchContext, record: ToolCallRecord): Pick<ExecuteOptions, 'onJob' | 'onProgress'> {
  return {
    onJob: (job) => {
      record.jobID = job.id;
      context.emit({ type: 'job', roundID: context.roundId, toolCallID: record.id, jobID: job.id, action: job.action });
      void context.checkpoint().catch(() => undefined);
    },
    onProgress: (progress) => context.emit({ type: 'progress', roundID: context.roundId, toolCallID: record.id, progress }),
  };
}

let validateQuestions: ValidateFunction | undefined;

/** The question tool: the turn waits for the person's answers, like for a confirmation. */
async function askPerson(context: BatchContext, call: StreamedCall, record: ToolCallRecord): Promise<CallResult> {
  let questions: Question[];
  const usage = 'question needs {"questions": [{"question": "...", "options"?: [{"label": "..."}], "multiple"?: boolean, "custom"?: boolean}]} with 1 to 10 questions';
  try {
    // Checked against the tool's whole schema: options that are not a list of labels were accepted, and
    // answering the question then failed (500) while the turn waited.
    validateQuestions ??= getKernelAjv().compile(QUESTION_TOOL.inputSchema);
    const checked = runValidator<{ questions: Question[] }>(validateQuestions, JSON.parse(call.arguments || '{}'));
    if (!checked.ok) return failure('INVALID_INPUT', `${formatIssues(checked.issues)}; ${usage}`);
    questions = checked.value.questions;
  } catch {
    return context.cutAtLimit ? cutOff(call.name) : failure('INVALID_INPUT', `the arguments are not JSON; ${usage}`);
  }
  const waiting = linkedController(context.signal, waitLimit(context.confirmTimeoutMs));
  const { question, answered } = context.questions.ask(context.sessionId, context.turnId, questions, waiting.signal);
  // Kept in the runtime turn, so that a pending question shows in the session and survives a restart's reading.
  record.questionID = question.id;
  await context.checkpoint();
  context.emit({ type: 'question', roundID: context.roundId, questionID: question.id, questions });
  const answers = await answered.finally(() => waiting.unlink());
  if (answers === undefined) return { ok: false, output: context.signal.aborted ? 'Question cancelled.' : 'No answer received (timed out).' };
  if (answers.every((chosen) => chosen.length === 0)) return { ok: true, output: 'User provided no answer.' };
  return { ok: true, output: questions.map((item, i) => `${item.question}\n${(answers[i] ?? []).join(', ') || '(no answer)'}`).join('\n\n') };
}

function prepareCall(context: BatchContext, call: StreamedCall, mode: SessionMode): { call: PreparedCall } | { result: CallResult } {
  let input: unknown;
  // Cut off right after its name: empty arguments are no call's whole arguments then (one without
  // required fields would have run with none).
  if (context.cutAtLimit && call.arguments.trim() === '') return { result: cutOff(call.name) };
  try {
    input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    // Told "not valid JSON", the model sent the same too-long call again until the doom-loop rule stopped it.
    if (context.cutAtLimit) return { result: cutOff(call.name) };
    return { result: failure('INVALID_INPUT', `The arguments of ${call.name} are not valid JSON; send one JSON object`) };
  }
  // The same bound as a body over HTTP or MCP: later walks (hashing, validation) are recursive.
  const tooDeep = pathPastDepth(input, MAX_JSON_DEPTH);
  if (tooDeep) return { result: failure('INVALID_INPUT', `The arguments of ${call.name} nest deeper than ${MAX_JSON_DEPTH} levels (at ${shortPointer(tooDeep)}); it was not run`) };
  const principal: Principal = { kind: 'agent', name: `agent:${context.sessionId}/${context.turnId}/${call.id}`, role: 'admin', sessionId: context.sessionId, turnId: context.turnId };
  try {
    // The turn's signal goes with the call, so that a cancel reaches the handler while it runs.
    return { call: context.pipeline.prepare({ target: call.name, input, principal, sessionMode: mode, signal: context.signal, localOnlyInContext: context.localOnlyInContext?.() === true }) };
  } catch (error) {
    return { result: failure(isKernelError(error) ? error.code : 'INTERNAL', error instanceof Error ? error.message : String(error)) };
  }
}

/**
 * The action as the registry holds it now, after the waits of the person's answer and the snapshot: a
 * plugin disabled or an external tool dropped meanwhile refuses the call, and so does a changed
 * definition (the person approved what they were shown). The same definition registered again (a
 * plugin re-enabled, a server's tools listed again) runs with the current entry, never a disposed one's handler.
 */
function stillRegistered(registry: ActionRegistry, call: PreparedCall): { call: PreparedCall } | { result: CallResult } {
  const current = registry.get(call.entry.wireName);
  if (current === call.entry) return { call };
  if (!current) return { result: failure('ACTION_NOT_FOUND', `${call.entry.wireName} is no longer available (its plugin or server went away while the call waited); it was not run`) };
  if (definitionOf(current) !== definitionOf(call.entry)) {
    return { result: failure('ACTION_CHANGED', `${call.entry.wireName} changed its definition while the call waited; it was not run. Read its new description and call it again if it still fits`) };
  }
  return { call: { ...call, entry: current } };
}

/**
 * The gate's judgement made again right before the call runs: the person's answer and the snapshot are
 * waits, and a rollback meanwhile may have given a notebook back a deny rule's or a read-only limit's
 * reach, or a grant may have gone (the call ran on the judgement made before, into a notebook now
 * read-only to the agent). Refused now, it is not run; one the gate would now ask about, and the
 * person did not approve, is not run either: the model is told to call it again.
 */
async function judgedAgain(context: BatchContext, call: PreparedCall, confirmationId: string | undefined): Promise<{ call: PreparedCall } | { result: CallResult }> {
  let fresh: PreparedCall;
  try {
    fresh = context.pipeline.prepare({ target: call.entry.wireName, input: call.input, principal: call.principal, sessionMode: await context.mode(), signal: context.signal, localOnlyInContext: context.localOnlyInContext?.() === true });
  } catch (error) {
    return { result: failure(isKernelError(error) ? error.code : 'INTERNAL', `${error instanceof Error ? error.message : String(error)} (judged again right before it ran; it was not run)`) };
  }
  if (fresh.decision.outcome === 'confirm' && confirmationId === undefined) {
    return { result: failure('ACTION_CHANGED', `${call.entry.wireName} now needs the person's approval (the notes or the grants changed while it waited); it was not run. Call it again if it still fits`) };
  }
  // Approved by the person, it runs as approved (the approval is consumed, and the audit names it),
  // even where a grant the answer made ("always") would let it through now.
  return { call: { ...fresh, entry: call.entry, ...(confirmationId !== undefined ? { decision: call.decision } : {}) } };
}

/** What the gate and the person judged: everything of an entry but its handler and validators. */
function definitionOf(entry: RegisteredAction): string {
  const { pluginId, source, trusted, tool, action, wireName, spec, declaredEffects, effects } = entry;
  return canonicalJson({ pluginId, source, trusted, tool, action, wireName, spec, declaredEffects, effects });
}

/** A call the gate holds waits for the person: approved, it runs; rejected or unanswered, it is skipped. */
async function approval(context: BatchContext, call: PreparedCall, record: ToolCallRecord): Promise<{ confirmationId?: string; result?: CallResult }> {
  if (call.decision.outcome !== 'confirm') return {};
  const confirmation = await context.pipeline.requestConfirmation(call);
  record.confirmationID = confirmation.id;
  await context.checkpoint();
  context.emit({ type: 'confirm', roundID: context.roundId, confirmation });
  const waiting = linkedController(context.signal, waitLimit(context.confirmTimeoutMs));
  const waited = await context.confirmations.waitForAnswer(confirmation.id, waiting.signal).catch(() => undefined).finally(() => waiting.unlink());
  // Nobody waits any more: close it, unless an answer raced in first (then that answer counts).
  const answered = waited ?? await context.confirmations.expire(confirmation.id);
  if (answered.status === 'approved' && !context.signal.aborted) return { confirmationId: confirmation.id };
  if (context.signal.aborted) await context.confirmations.expire(confirmation.id, { evenIfApproved: true });
  if (context.signal.aborted) return { result: failure('ACTION_CANCELLED', 'The turn was cancelled before the person answered.') };
  if (answered.status === 'rejected') return { result: failure('ACTION_DENIED', 'The person declined this call. Do not repeat it; ask or try another way.') };
  return { result: failure('ACTION_TIMEOUT', 'The person did not answer in time; the call was not made.') };
}

async function takeSnapshot(context: BatchContext): Promise<BatchStop> {
  if (!context.snapshots) {
    if (!context.requireSnapshot) return undefined;
    return { reason: 'snapshot_failed', message: 'No snapshot service is available, and a snapshot is required before the agent writes (agent.requireSnapshot).' };
  }
  try {
    const { id } = await context.snapshots.snapshot({ sessionId: context.sessionId, turnId: context.turnId, memo: 'agent auto snapshot' }); // TURN_START_MEMO in turn-loop.ts
    context.snapshotTaken = true;
    context.snapshotIds.push(id);
    context.emit({ type: 'snapshot', roundID: context.roundId, snapshotID: id });
    return undefined;
  } catch (error) {
    return { reason: 'snapshot_failed', message: `The snapshot before the first write failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * Records a call's result. `notebooks`: whose notes' content it holds (see notebooksInResult); a
 * result the kernel wrote itself (a refusal, a question's answer) holds none.
 */
async function finish(context: BatchContext, record: ToolCallRecord, result: CallResult, notebooks: string[] | 'all' = []): Promise<void> {
  const prepared = await prepareToolOutput(result.output, context.outputDir, `${context.roundId}_${record.id}`);
  record.result = prepared.text;
  record.notebooks = notebooks;
  record.state = 'finished';
  record.ok = result.ok;
  await context.checkpoint();
  context.emit({ type: 'tool_result', roundID: context.roundId, toolCallID: record.id, ok: result.ok, output: prepared.text });
}

/** The same state and words as a call a crash cut off (session-types.ts): the model must not repeat it blindly. */
async function finishUnknown(context: BatchContext, record: ToolCallRecord): Promise<void> {
  record.state = 'unknown';
  record.result = RESULT_UNKNOWN;
  record.ok = false;
  await context.checkpoint();
  context.emit({ type: 'tool_result', roundID: context.roundId, toolCallID: record.id, ok: false, output: RESULT_UNKNOWN });
}

const SKIPPED_CODE: Record<StopReason | 'too_many', string> = {
  cancelled: 'ACTION_CANCELLED', snapshot_failed: 'SNAPSHOT_FAILED', outcome_unknown: 'ACTION_SKIPPED', doom_loop: 'DOOM_LOOP', too_many: 'TOO_MANY_CALLS',
};

async function skipRest(context: BatchContext, records: ToolCallRecord[], from: number, reason: StopReason | 'too_many', message: string): Promise<BatchStop> {
  for (const record of records.slice(from)) {
    // Already answered (past the calls of one answer that are run).
    if (record.state === 'skipped') continue;
    record.state = 'skipped';
    record.result = `[tool_output]\n${JSON.stringify({ ok: false, error: { code: SKIPPED_CODE[reason], message } })}\n[/tool_output]`;
    context.emit({ type: 'tool_result', roundID: context.roundId, toolCallID: record.id, ok: false, output: record.result });
  }
  return reason === 'too_many' ? undefined : { reason, message };
}
