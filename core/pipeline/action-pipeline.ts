import { inject, injectable } from '../di.js';
import { ACTION_REGISTRY, AUDIT_LOG, CONFIRMATION_STORE, GRANTS_STORE, JOB_MANAGER, KERNEL_CONFIG, KERNEL_CONTAINER, LOGGER } from '../core-tokens.js';
import type { JobManager, StartedJob } from '../jobs/job-manager.js';
import type { DependencyContainer } from '../di.js';
import { NOTEBOOK_SCOPE, type AgentLimit, type NotebookScope } from '../gate/notebook-scope.js';
import { checkAgentLimits, limitedTo, NO_AGENT_LIMITS } from '../gate/agent-limits.js';
import { closedToMcp } from '../gate/mcp-closed.js';
import { crossesLocalOnly, refuseMcpCrossing } from '../gate/local-only-crossing.js';
import { effectiveEffects } from '../gate/effects.js';
import { checkRole } from './role-check.js';
import { KernelError, NotFoundError, isKernelError, ConflictError } from '../errors.js';
import { hashArguments } from '../canonical-json.js';
import type { KernelConfig } from '../config/kernel-config.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { AuditEntry, AuditOutcome } from '../audit/audit-record.js';
import { auditEntryFor, ranUnrecorded } from './audit-entry.js';
import type { Confirmation } from '../gate/confirmation.js';
import type { ConfirmationStore } from '../gate/confirmation-store.js';
import { decide, denyRuleMatches, type SessionMode } from '../gate/decide.js';
import type { GrantsStore } from '../gate/grants-store.js';
import type { Logger } from '../log.js';
import type { Effect, Principal, StopReason } from '../plugin-api.js';
import type { ActionRegistry, RegisteredAction } from '../registry/action-registry.js';
import { formatIssues, runValidator } from '../schema/ajv.js';
import type { ActionRef, CallDecision, PreparedCall } from './prepared-call.js';
import { runHandler, type LateOutcome, type RunLimits } from './run-handler.js';
import { RefusalWindow } from './refusal-window.js';
import type { ActionRequest, CallOutcome, ExecuteOptions } from './action-request.js';
import { assertJsonResult } from './json-result.js';

/** What the gate weighs besides grants and mode when local-only notes are involved (decide.ts). */
interface LocalOnlyFlags { localOnlyInContext: boolean; crossesLocalOnly: boolean }

let callCounter = 0;
const PROCESS_TAG = `${process.pid.toString(36)}${Date.now().toString(36)}`;

/** Ids of calls in this process: unique and cheap (no randomness needed, they never reach a path). */
function nextCallId(): string {
  callCounter += 1;
  return `call-${PROCESS_TAG}-${callCounter}`;
}

export type { ActionRequest, CallOutcome, ExecuteOptions } from './action-request.js';

/**
 * The single path of every call, from every surface: Map lookup → input validation → role and
 * read-only checks → effects gate (agent calls) → handler in its effect scope → audit (actions with effects).
 */
const NO_NOTEBOOKS: ReadonlySet<string> = new Set();
const PERSON_DECISION: CallDecision = Object.freeze({ outcome: 'run', reason: 'caller_is_person' });
const NO_LIMITS: RunLimits = Object.freeze({});

@injectable()
export class ActionPipeline {
  /** Refusals left out within a minute are written as one line with their count (repeated). */
  private readonly refusals = new RefusalWindow<{ entry: RegisteredAction; request: ActionRequest; code: string }>(({ entry, request, code }, repeated) => {
    void this.append(auditEntryFor(entry, request.principal, hashArguments(request.input), 'refused', code, { repeated })).catch(() => undefined);
  });

  constructor(
    @inject(ACTION_REGISTRY) private readonly registry: ActionRegistry,
    @inject(GRANTS_STORE) private readonly grants: GrantsStore,
    @inject(CONFIRMATION_STORE) private readonly confirmations: ConfirmationStore,
    @inject(AUDIT_LOG) private readonly audit: AuditLog,
    @inject(KERNEL_CONFIG) private readonly config: KernelConfig,
    @inject(LOGGER) private readonly log: Logger,
    @inject(KERNEL_CONTAINER) private readonly container: DependencyContainer,
    @inject(JOB_MANAGER) private readonly jobs: JobManager,
  ) {}

  /** Set once the workspace lock is no longer this kernel's (`fence`): every call, a turn's too, is refused, nothing recorded. */
  private fenced: KernelError | undefined;
  fence(holder: string): void { this.fenced = new KernelError('WORKSPACE_LOCKED', `this kernel no longer holds the workspace (its lock is held by ${holder}); it answers nothing more`, { details: { holder } }); }

  /** Runs a call to the end, or stops at a confirmation the person must answer (agent calls only). */
  call(request: ActionRequest): Promise<CallOutcome> {
    if (this.fenced) return Promise.reject(this.fenced);
    // Written with then() rather than async/await: every promise costs extra while the action scope's
    // AsyncLocalStorage is active, and this is the path of every call.
    let call: PreparedCall;
    try {
      call = this.prepare(request);
    } catch (error) {
      return this.recordRefusal(request, error).then(() => Promise.reject(error));
    }
    if (call.decision.outcome === 'confirm') {
      return this.requestConfirmation(call).then((confirmation) => ({ status: 'confirmation_required', confirmation, call }));
    }
    // A plain read (no effects, no progress, not long): straight to the handler, answered in one step.
    if (call.entry.effects.length === 0 && call.entry.spec.long !== true && !request.onProgress) {
      return this.run(call, {}, (value) => ({ status: 'ok', value, call })) as Promise<CallOutcome>;
    }
    const options: ExecuteOptions = { ...(request.onProgress ? { onProgress: request.onProgress } : {}), ...(request.onJob ? { onJob: request.onJob } : {}) };
    if (request.background === true && call.entry.spec.long === true) {
      // In a promise: a job refused at its start (the kernel closing) is a rejection, as every other refusal here.
      return new Promise<StartedJob>((resolve) => resolve(this.startJob(call, options))).then((job) => ({ status: 'job', job: job.record, done: job.done, call }));
    }
    return this.execute(call, options).then((value) => ({ status: 'ok', value, call }));
  }

  /** Everything before the handler; throws a typed error for an unknown action, bad input, or a refusal. */
  prepare(request: ActionRequest): PreparedCall {
    if (this.fenced) throw this.fenced;
    const entry = this.lookup(request.target, request.principal);
    const input = this.validateInput(entry, request.input, request.ownsInput === true);
    const { principal } = request;
    // The action's own effects: those of the embedder or reranker it uses are not a reader's to cause,
    // and a reader's call goes without such a backend (BackendRegistry answers that), nor are they a
    // change to a read-only workspace.
    const own = entry.spec.backends?.length ? effectiveEffects(entry.declaredEffects, entry.source, entry.trusted) : entry.effects;
    checkRole(entry, principal, own);
    if (own.length > 0 && this.config.readOnly) {
      throw new KernelError('WORKSPACE_READ_ONLY', `the workspace is read-only; ${entry.wireName} has effects (${entry.effects.join(', ')})`, { details: { action: entry.wireName } });
    }
    const limits = this.agentLimits(principal);
    const denied = this.deniedNotebooks(entry, principal, limits, own);
    const notebooks = this.notebooksOf(entry, own, input, principal, denied);
    checkAgentLimits(entry, notebooks, limits);
    const notebook = notebooks[0];
    const crosses = crossesLocalOnly(this.container, principal, notebooks, { plugin: entry.pluginId, tool: entry.tool, action: entry.action, input });
    refuseMcpCrossing(entry.wireName, entry.effects, principal, crosses, this.config.mcp.sendLocalOnly);
    const decision = this.decideFor(entry, principal, notebooks, request.sessionMode ?? 'confirm', { localOnlyInContext: request.localOnlyInContext === true, crossesLocalOnly: crosses });
    if (decision.outcome === 'deny') {
      throw new KernelError('ACTION_DENIED', `${entry.wireName} is denied by a rule in quire.json`, { details: { action: entry.wireName, rule: decision.rule } });
    }
    const needsHash = decision.outcome === 'confirm' || entry.effects.length > 0;
    return {
      id: nextCallId(), entry, input, principal, notebook, decision, cancel: request.signal, returned: { said: false, notebooks: new Set() }, deniedNotebooks: denied,
      readOnlyNotebooks: limitedTo('read', limits), argsHash: needsHash ? hashArguments(input) : '',
    };
  }

  /** Persists a pending confirmation for a call the gate could not let through. */
  requestConfirmation(call: PreparedCall, id?: string): Promise<Confirmation> {
    const { entry, principal } = call;
    return this.confirmations.create({
      ...(id !== undefined ? { id } : {}),
      plugin: entry.pluginId, tool: entry.tool, action: entry.action, wireName: entry.wireName,
      arguments: structuredClone(call.input), argsHash: call.argsHash, effects: [...entry.effects], destructive: entry.spec.destructive === true,
      principal: principal.name,
      ...(principal.sessionId !== undefined ? { sessionId: principal.sessionId } : {}),
      ...(principal.turnId !== undefined ? { turnId: principal.turnId } : {}),
      ...(call.notebook !== undefined ? { notebook: call.notebook } : {}),
      ...(call.decision.outcome === 'confirm' && call.decision.reason === 'local_only_in_context'
        ? { note: 'The conversation holds notes of local-only notebooks, and this call sends data off this machine: it is asked every time, whatever grant or mode.' } : {}),
      ...(call.decision.outcome === 'confirm' && call.decision.reason === 'local_only_crossing'
        ? { note: 'This call moves or copies notes between a notebook marked local-only and one that is not, or writes them out of the workspace: there a model off this machine could read them. It is asked every time, whatever grant or mode.' } : {}),
    });
  }

  /**
   * Runs the handler; a call that needed the person runs only with its approved, unused confirmation.
   * A long action runs as a job, and this waits for it (its caller's signal cancels the job).
   */
  execute(call: PreparedCall, options: ExecuteOptions = {}): Promise<unknown> {
    if (this.fenced) return Promise.reject(this.fenced);
    if (call.entry.spec.long === true) return new Promise((resolve) => resolve(this.startJob(call, options).done));
    if (call.decision.outcome !== 'confirm' && call.entry.effects.length === 0 && !options.onProgress) return this.run(call, NO_LIMITS);
    return this.executeRecorded(call, options, {});
  }

  /** Starts a long action as a job, bounded by the job time limit instead of the call limit. */
  private startJob(call: PreparedCall, options: ExecuteOptions): StartedJob {
    const { entry } = call;
    const job = this.jobs.start({ action: entry.wireName, plugin: entry.pluginId, tool: entry.tool, name: entry.action, principal: call.principal }, (control) => {
      const asJob: PreparedCall = { ...call, cancel: control.signal };
      return this.executeRecorded(asJob, options, {
        timeoutMs: this.config.actions.jobTimeoutMs, onProgress: (update) => { control.progress(update); options.onProgress?.(update); },
        onStopped: (reason) => control.stopped(reason), onLate: (late) => control.late(late), onAbandoned: () => control.abandoned(),
      });
    });
    // The caller going away (a cancelled turn, an MCP cancel) cancels the job it waits for.
    const cancel = call.cancel;
    if (cancel && 'addEventListener' in cancel) {
      const onAbort = (): void => { this.jobs.cancel(job.record.id); };
      if (cancel.aborted) onAbort();
      else {
        cancel.addEventListener('abort', onAbort, { once: true });
        void job.done.finally(() => cancel.removeEventListener('abort', onAbort)).catch(() => undefined);
      }
    }
    options.onJob?.(job.record);
    return job;
  }

  private async executeRecorded(call: PreparedCall, options: ExecuteOptions, limits: RunLimits): Promise<unknown> {
    if (call.decision.outcome === 'confirm') {
      await this.consumeApproval(call, options.confirmationId);
      // The plugin may have gone while the person answered: its handler must not run then.
      const current = this.registry.get(call.entry.wireName);
      if (current?.pluginId !== call.entry.pluginId) {
        throw new NotFoundError('ACTION_NOT_FOUND', `${call.entry.wireName} is no longer available; the approval was not used`, { details: { action: call.entry.wireName } });
      }
      // Disabled and enabled again meanwhile: the handler of the plugin as it is now, not the disposed one's,
      // and only if it still declares what the person approved (a changed manifest asks again).
      if (current !== call.entry) {
        if (current.effects.join() !== call.entry.effects.join()) {
          throw new ConflictError('CONFLICT', `${call.entry.wireName} changed its effects since it was approved (${call.entry.effects.join(', ') || 'none'} → ${current.effects.join(', ') || 'none'}); the approval was not used`, { details: { action: call.entry.wireName } });
        }
        call = { ...call, entry: current };
      }
    }
    const audited = call.entry.effects.length > 0;
    let stopped: StopReason | undefined;
    const onProgress = limits.onProgress ?? options.onProgress;
    const runLimits: RunLimits = {
      ...limits, ...(onProgress ? { onProgress } : {}),
      onStopped: (reason) => { stopped = reason; limits.onStopped?.(reason); },
      // A handler answered as "may still be running" that finishes after all: a second line says how, so
      // the log does not stand on a failure whose effects landed (and a job's record, how it ended).
      ...(audited || limits.onLate ? { onLate: (late: LateOutcome) => {
        if (audited) void this.record(call, late.ok ? 'ok' : 'error', late.ok ? undefined : late.code, { late: true }).catch(() => undefined);
        limits.onLate?.(late);
      } } : {}),
    };
    let value: unknown;
    try {
      value = await this.run(call, runLimits);
    } catch (error) {
      // The handler's error is what the caller gets: an audit line that could not be written is logged (append).
      const running = isKernelError(error) && error.details?.stillRunning === true ? { stillRunning: true } : {};
      if (audited) await this.record(call, 'error', isKernelError(error) ? error.code : 'INTERNAL', { ...(stopped ? { stopped } : {}), ...running }).catch(() => undefined);
      throw error;
    }
    // A call stopped at its limit that answered what it did before stopping had effects: recorded as ok, with why it stopped.
    if (audited) {
      try {
        await this.record(call, 'ok', undefined, stopped ? { stopped } : {});
      } catch (auditError) {
        throw ranUnrecorded(call.entry, auditError);
      }
    }
    return value;
  }

  /**
   * The handler in its scope, then the output check; refused egress is recorded before the call ends.
   * `answer` turns the checked value into what the caller gets, in the same step (no promise more).
   */
  private run(call: PreparedCall, limits: RunLimits, answer?: (value: unknown) => unknown): Promise<unknown> {
    const { entry } = call;
    return runHandler(call, {
      timeoutMs: limits.timeoutMs ?? entry.timeoutMs ?? this.config.actions.timeoutMs,
      stopGraceMs: this.config.actions.stopGraceMs,
      log: entry.log,
      onRefused: (target) => this.record(call, 'egress_denied', 'EGRESS_DENIED', { target }).catch(() => undefined),
      accept: entry.validateOutput || answer || entry.source !== 'native' ? (value) => {
        this.checkOutput(entry, value);
        return answer ? answer(value) : value;
      } : undefined,
      onProgress: limits.onProgress,
      onStopped: limits.onStopped,
      ...(limits.onLate ? { onLate: limits.onLate } : {}),
      ...(limits.onAbandoned ? { onAbandoned: limits.onAbandoned } : {}),
    });
  }

  private find(target: string | ActionRef): RegisteredAction | undefined {
    return typeof target === 'string' ? this.registry.get(target) : this.registry.find(target.plugin, target.tool, target.action);
  }

  private lookup(target: string | ActionRef, principal: Principal): RegisteredAction {
    const entry = this.find(target);
    // Agent-only actions do not exist for other callers, a person's settings not for the agent.
    if (!entry || (entry.spec.agentOnly === true && principal.kind !== 'agent') || (entry.spec.personOnly === true && principal.kind === 'agent')) {
      const name = typeof target === 'string' ? target : `${target.plugin}/${target.tool}/${target.action}`;
      throw new NotFoundError('ACTION_NOT_FOUND', `no action '${name}' is available`, { details: { action: name } });
    }
    return entry;
  }

  private validateInput(entry: RegisteredAction, raw: unknown, ownsInput: boolean): Record<string, unknown> {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new KernelError('INVALID_INPUT', `input of ${entry.wireName} must be a JSON object`, { details: { action: entry.wireName, issues: [{ pointer: '', message: 'must be an object' }] } });
    }
    const result = runValidator<Record<string, unknown>>(entry.validateInput, ownsInput ? raw : structuredClone(raw));
    if (!result.ok) {
      throw new KernelError('INVALID_INPUT', `invalid input for ${entry.wireName}: ${formatIssues(result.issues)}`, { details: { action: entry.wireName, issues: result.issues } });
    }
    return result.value;
  }

  /**
   * The notebooks a call touches: the one its input names, and for agent calls those of the blocks and
   * documents it names (so that naming a block cannot side-step a notebook's rule).
   */
  private notebooksOf(entry: RegisteredAction, own: readonly Effect[], input: Record<string, unknown>, principal: Principal, denied: ReadonlySet<string>): string[] {
    // A native read leaves out what a deny rule or `agent: none` closes to the agent (call.deniedNotebooks)
    // and answers as if it did not exist; refusing it here would tell the agent that the id it named lies
    // there. By its own effects: a search using a remote embedder or reranker is still a read (it answered
    // a hidden id NOT_FOUND and a made-up one with results), whose other notebooks still decide its grants.
    const agentLike = principal.kind === 'agent' || principal.kind === 'mcp';
    const read = agentLike && entry.source === 'native' && own.length === 0;
    if (read && entry.effects.length === 0) return [];
    const named = typeof input.notebook === 'string' ? [input.notebook] : [];
    if (!agentLike || !this.container.isRegistered(NOTEBOOK_SCOPE, true)) return named;
    const found = this.container.resolve<NotebookScope>(NOTEBOOK_SCOPE).notebooksOf({ plugin: entry.pluginId, tool: entry.tool, action: entry.action, input });
    const all = [...new Set([...named, ...found])];
    return read ? all.filter((notebook) => !denied.has(notebook)) : all;
  }

  /**
   * The notebooks the agent is closed out of: those deny rules close to this action (rules name
   * people's limits on the agent), and those whose privacy says `agent: none`, for every action.
   */
  private deniedNotebooks(entry: RegisteredAction, principal: Principal, limits: ReadonlyMap<string, AgentLimit>, own: readonly Effect[]): ReadonlySet<string> {
    // An MCP client is an agent too (Claude Desktop, Cursor): the notebooks' privacy holds for it; deny rules name quire's own agent.
    if (principal.kind === 'mcp') return closedToMcp(entry, own, limits, this.container, this.config.mcp.sendLocalOnly);
    if (principal.kind !== 'agent') return NO_NOTEBOOKS;
    const denied = new Set<string>(limitedTo('none', limits));
    for (const rule of this.config.gate.deny) {
      if (rule.notebook !== undefined && denyRuleMatches(rule, { ...entry, plugin: entry.pluginId, notebook: rule.notebook })) denied.add(rule.notebook);
    }
    return denied.size > 0 ? denied : NO_NOTEBOOKS;
  }

  /** The agent's privacy limits by notebook (one place: the notebooks' own settings); none for people. */
  private agentLimits(principal: Principal): ReadonlyMap<string, AgentLimit> {
    if ((principal.kind !== 'agent' && principal.kind !== 'mcp') || !this.container.isRegistered(NOTEBOOK_SCOPE, true)) return NO_AGENT_LIMITS;
    return this.container.resolve<NotebookScope>(NOTEBOOK_SCOPE).agentLimits();
  }

  /** Decided once per notebook the call touches; the strictest outcome wins. */
  private decideFor(entry: RegisteredAction, principal: Principal, notebooks: readonly string[], sessionMode: SessionMode, flags: LocalOnlyFlags): CallDecision {
    if (principal.kind !== 'agent') return PERSON_DECISION;
    if (notebooks.length <= 1) return this.decideOne(entry, notebooks[0], sessionMode, flags);
    const decisions = notebooks.map((notebook) => this.decideOne(entry, notebook, sessionMode, flags));
    return decisions.find((d) => d.outcome === 'deny') ?? decisions.find((d) => d.outcome === 'confirm') ?? decisions[0]!;
  }

  private decideOne(entry: RegisteredAction, notebook: string | undefined, sessionMode: SessionMode, flags: LocalOnlyFlags): CallDecision {
    return decide({
      plugin: entry.pluginId, tool: entry.tool, action: entry.action, ...(entry.externalName !== undefined ? { externalName: entry.externalName } : {}), source: entry.source, trusted: entry.trusted,
      // The effects the call will have: the manifest's, and those of the embedder or reranker it uses.
      declaredEffects: entry.effects, ...(notebook !== undefined ? { notebook } : {}),
      denyRules: this.config.gate.deny, grants: this.grants.list(), sessionMode,
      allowAutoMode: this.config.gate.allowAutoMode, now: new Date(), ...flags,
    });
  }

  /**
   * The approval must be for this action, these exact arguments (hashed again now, not as prepared)
   * and this session; the store checks and consumes it in one step, so it is used once.
   */
  private async consumeApproval(call: PreparedCall, confirmationId: string | undefined): Promise<void> {
    if (confirmationId === undefined) {
      throw new KernelError('CONFIRMATION_NOT_APPROVED', `${call.entry.wireName} needs the person's approval before it runs`);
    }
    await this.confirmations.consume(confirmationId, {
      wireName: call.entry.wireName,
      argsHash: hashArguments(call.input),
      sessionId: call.principal.sessionId,
    });
  }

  private checkOutput(entry: RegisteredAction, value: unknown): void {
    if (entry.source !== 'native') assertJsonResult(entry.pluginId, entry.wireName, value);
    if (!entry.validateOutput) return;
    const result = runValidator(entry.validateOutput, value);
    if (!result.ok) {
      throw new KernelError('PLUGIN_ERROR', `[plugin ${entry.pluginId}] ${entry.wireName} returned a result that does not match its output schema (${formatIssues(result.issues)}); it may have had effects, do not retry blindly`, { details: { plugin: entry.pluginId, issues: result.issues } });
    }
  }

  private record(call: PreparedCall, outcome: AuditOutcome, errorCode?: string, details: Record<string, unknown> = {}): Promise<unknown> {
    const { decision } = call;
    const facts = { ...details, ...(decision.outcome === 'run' && decision.reason === 'grant' ? { grantId: decision.grantId } : {}) };
    return this.append(auditEntryFor(call.entry, call.principal, call.argsHash || hashArguments(call.input), outcome, errorCode, facts));
  }

  /**
   * A call with effects that was refused before it ran (role, read-only workspace, deny rule) is audited
   * too: one line per caller, action and reason a minute, and one at its end counting those left out (a reader
   * token calling a write in a loop wrote a durable line per request, until the disk was full).
   */
  private recordRefusal(request: ActionRequest, error: unknown): Promise<unknown> {
    try {
      if (!isKernelError(error) || !REFUSALS.has(error.code)) return Promise.resolve();
      const entry = this.find(request.target);
      if (!entry || entry.effects.length === 0) return Promise.resolve();
      const key = `${request.principal.kind}:${request.principal.name}\u0000${entry.wireName}\u0000${error.code}`;
      if (!this.refusals.admit(key, Date.now(), { entry, request, code: error.code })) return Promise.resolve();
      return this.append(auditEntryFor(entry, request.principal, hashArguments(request.input), 'refused', error.code)).catch(() => undefined);
    } catch {
      return Promise.resolve();
    }
  }

  private append(entry: AuditEntry): Promise<unknown> {
    return this.audit.append(entry).catch((error: unknown) => {
      this.log.error('audit append failed', { error: (error as Error).message, action: `${entry.plugin}/${entry.tool}/${entry.action}` });
      throw error;
    });
  }
}

const REFUSALS: ReadonlySet<string> = new Set(['FORBIDDEN', 'WORKSPACE_READ_ONLY', 'ACTION_DENIED']);
