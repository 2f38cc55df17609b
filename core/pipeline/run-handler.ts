import { basename, isAbsolute, sep } from 'node:path';
import { KernelError, PLUGIN_RAISABLE, PluginError, isKernelError, isRaisableCode, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { ActionCall, Effect, Principal, ProgressUpdate, StopReason } from '../plugin-api.js';
import { runInActionScope, type RunningAction } from '../egress/action-scope.js';
import { DeadlineWatch, Watched } from './deadline-watch.js';
import { isCancelled, type CancelSource } from './cancel-source.js';
import { noteFailedCall, type PreparedCall } from './prepared-call.js';

export interface RunOptions {
  timeoutMs: number;
  /** How long a stopped handler that watches its stop is waited for, to report what it really did. */
  stopGraceMs: number;
  log: Logger;
  /** Told of egress the handler did not declare; the call answers only once what it returns (the audit record) settles. */
  onRefused(target: string): Promise<unknown> | undefined;
  /** Checks the handler's value and gives what the call answers with; what it throws fails the call. */
  accept?: (value: unknown) => unknown;
  onProgress?: (update: ProgressUpdate) => void;
  /** Told when the call was stopped (time limit or cancel) and its handler was waited for. */
  onStopped?: (reason: StopReason) => void;
  /**
   * Told when a handler the call was answered without (stopped, it did not stop: "may still be running")
   * finishes after all, with how: the audit says then what it did.
   */
  onLate?: (outcome: LateOutcome) => void;
  /** Told when the call is answered without its handler (stopped, it did not stop within the grace): `onLate` may follow. */
  onAbandoned?: () => void;
}

/** What a job or a caller changes about one run of a handler. */
export interface RunLimits {
  timeoutMs?: number;
  onProgress?: (update: ProgressUpdate) => void;
  onStopped?: (reason: StopReason) => void;
  onLate?: RunOptions['onLate'];
  onAbandoned?: RunOptions['onAbandoned'];
}

/** How a handler answered without waiting for finished after all: its checked value, or its error. */
export type LateOutcome = { ok: true; value: unknown } | { ok: false; code: string; error: unknown };

const deadlines = new DeadlineWatch();

/**
 * Runs a handler inside its action scope (so undeclared egress is refused), bounded by a time limit and
 * the caller's signal. Whatever the handler throws leaves here wrapped with the plugin's id.
 *
 * At the time limit or a cancel, the handler's signal is aborted. A handler that watches it (it read
 * `signal` or `stopped`) stops at its next safe point and is waited for, up to `stopGraceMs`, so the
 * answer is what happened ("imported 256 of 1,515, stopped at the time limit"), never "failed" after
 * a success nor silence while it goes on writing. A handler that never looks cannot be stopped in
 * this process: the answer says it may still be running.
 */
export function runHandler(call: PreparedCall, options: RunOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (call.cancel && isCancelled(call.cancel)) {
      reject(new KernelError('ACTION_CANCELLED', `${call.entry.wireName} was cancelled before it started`));
      return;
    }
    new HandlerRun(call, options, resolve, reject).start();
  });
}

/**
 * One running handler: its scope (what the egress guard asks), its deadline entry and its state, in one
 * object. This is the path of every call, and a closure per callback cost more than the rest of a read
 * action's path; what the handler sees is a separate small object (CallHandle).
 */
class HandlerRun extends Watched implements RunningAction {
  readonly plugin: string;
  readonly tool: string;
  readonly action: string;
  readonly declaredEffects: readonly Effect[];
  readonly native: boolean;
  readonly deadline: number;
  readonly cancel: CancelSource | undefined;
  readonly #call: PreparedCall;
  readonly #options: RunOptions;
  readonly #resolve: (value: unknown) => void;
  readonly #reject: (error: unknown) => void;
  #controller: AbortController | undefined;
  #stopError: KernelError | undefined;
  #stopKind: StopReason | undefined;
  // Native handlers stop at safe points by construction (every write checks at its turn in the write
  // queue), and a long action's job must account for its work: both are waited for once stopped.
  #watchesStop: boolean;
  #settled = false;
  #abandoned = false;
  #grace: NodeJS.Timeout | undefined;
  #refusals: Promise<unknown>[] | undefined;

  constructor(call: PreparedCall, options: RunOptions, resolve: (value: unknown) => void, reject: (error: unknown) => void) {
    super();
    const { entry } = call;
    this.plugin = entry.pluginId;
    this.tool = entry.tool;
    this.action = entry.action;
    this.declaredEffects = entry.declaredEffects;
    this.native = entry.source === 'native';
    this.deadline = Date.now() + options.timeoutMs;
    this.cancel = call.cancel;
    this.#call = call;
    this.#options = options;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#watchesStop = entry.source === 'native' || entry.spec.long === true;
  }

  start(): void {
    deadlines.watch(this);
    const handle = new CallHandle(this, this.#call, this.#options.log);
    // Inside the scope so that everything the handler starts, sync or async, is attributed to it.
    runInActionScope(this, () => {
      let result: unknown;
      try {
        result = this.#call.entry.handler(this.#call.input, handle);
      } catch (error) {
        this.#fail(error);
        return;
      }
      // A handler that answers at once is settled at once: no promise is made for it.
      if (isThenable(result)) Promise.resolve(result).then((value) => this.#succeed(value), (error: unknown) => this.#fail(error));
      else this.#succeed(result);
    });
  }

  onRefused(_kind: 'egress', target: string): void {
    const recorded = this.#options.onRefused(target);
    if (recorded) (this.#refusals ??= []).push(recorded);
  }

  onTimeout(): void {
    const { wireName } = this.#call.entry;
    const { timeoutMs } = this.#options;
    this.#stop('time_limit', new KernelError('ACTION_TIMEOUT', `${wireName} did not finish within ${timeoutMs} ms`, { details: { timeoutMs } }));
  }

  onCancel(): void {
    this.#stop('cancelled', new KernelError('ACTION_CANCELLED', `${this.#call.entry.wireName} was cancelled`));
  }

  /** The handler's signal, made only when the handler asks for it: most never do. */
  signal(): AbortSignal {
    this.#watchesStop = true;
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#stopError) this.#controller.abort(this.#stopError);
    }
    return this.#controller.signal;
  }

  stopped(): StopReason | undefined {
    this.#watchesStop = true;
    return this.#stopKind;
  }

  progress(update: ProgressUpdate): void {
    if (this.#options.onProgress && !this.#settled) this.#options.onProgress(update);
  }

  #succeed(value: unknown): void {
    if (!this.#settle()) {
      if (this.#abandoned) this.#late(value);
      return;
    }
    // Refused egress is recorded before the call answers.
    if (this.#refusals) void Promise.all(this.#refusals).then(() => this.#answer(value), () => this.#answer(value));
    else this.#answer(value);
  }

  #answer(value: unknown): void {
    const accept = this.#options.accept;
    if (!accept) return this.#resolve(value);
    let accepted: unknown;
    try {
      accepted = accept(value);
    } catch (error) {
      return this.#reject(error);
    }
    this.#resolve(accepted);
  }

  #fail(error: unknown): void {
    const { entry } = this.#call;
    const wrapped = wrapPluginError(error, entry.pluginId, `${entry.tool}.${entry.action}`);
    // Which call it came out of (what its handler said it returned), for a surface that holds back errors too (MCP).
    noteFailedCall(wrapped, this.#call);
    if (!this.#settle()) {
      if (this.#abandoned) this.#options.onLate?.({ ok: false, code: isKernelError(wrapped) ? wrapped.code : 'INTERNAL', error: wrapped });
      return;
    }
    if (this.#refusals) void Promise.all(this.#refusals).then(() => this.#reject(wrapped), () => this.#reject(wrapped));
    else this.#reject(wrapped);
  }

  /** A value that came after the call was answered without it, checked as an answer would have been. */
  #late(value: unknown): void {
    const onLate = this.#options.onLate;
    if (!onLate) return;
    let checked: unknown;
    try {
      checked = this.#options.accept ? this.#options.accept(value) : value;
    } catch (error) {
      onLate({ ok: false, code: isKernelError(error) ? error.code : 'INTERNAL', error });
      return;
    }
    onLate({ ok: true, value: checked });
  }

  /** Answers the call without its handler, which did not stop: what it does after is told to onLate. */
  #abandon(error: KernelError): void {
    if (!this.#settle()) return;
    this.#abandoned = true;
    this.#options.onAbandoned?.();
    this.#reject(stillRunning(error));
  }

  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    deadlines.clear(this);
    if (this.#grace) clearTimeout(this.#grace);
    return true;
  }

  #stop(kind: StopReason, error: KernelError): void {
    if (this.#settled || this.#stopKind !== undefined) return;
    this.#stopKind = kind;
    this.#stopError = error;
    this.#controller?.abort(error);
    if (!this.#watchesStop) {
      this.#abandon(error);
      return;
    }
    this.#options.onStopped?.(kind);
    this.#grace = setTimeout(() => this.#abandon(error), this.#options.stopGraceMs);
    this.#grace.unref();
  }
}

/** What a handler sees of its call. */
class CallHandle implements ActionCall {
  readonly callId: string;
  readonly principal: Principal;
  readonly deniedNotebooks: ReadonlySet<string>;
  readonly readOnlyNotebooks: ReadonlySet<string>;
  readonly log: Logger;
  readonly #run: HandlerRun;
  readonly #returned: PreparedCall['returned'];

  constructor(run: HandlerRun, call: PreparedCall, log: Logger) {
    this.callId = call.id;
    this.principal = call.principal;
    this.deniedNotebooks = call.deniedNotebooks;
    this.readOnlyNotebooks = call.readOnlyNotebooks;
    this.#returned = call.returned;
    this.log = log;
    this.#run = run;
  }

  get signal(): AbortSignal {
    return this.#run.signal();
  }

  get stopped(): StopReason | undefined {
    return this.#run.stopped();
  }

  progress(update: ProgressUpdate): void {
    this.#run.progress(update);
  }

  returned(notebooks: Iterable<string>): void {
    this.#returned.said = true;
    for (const notebook of notebooks) this.#returned.notebooks.add(notebook);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/** A stopped call whose handler did not stop: its effects are unknown, and retrying may repeat them. */
function stillRunning(error: KernelError): KernelError {
  return new KernelError(error.code, `${error.message}; it did not stop, so it may still be running and what it changed is unknown: check before retrying`, { details: { ...error.details, stillRunning: true } });
}

/**
 * Every error leaves a handler wrapped with the id of the plugin that really ran: a plugin cannot
 * blame another plugin, nor answer with a status that means something else (401 would make a client
 * drop a valid token).
 */
function wrapPluginError(error: unknown, pluginId: string, action: string): KernelError {
  if (isKernelError(error)) {
    const code = PLUGIN_RAISABLE.has(error.code) ? error.code : 'PLUGIN_ERROR';
    const message = error instanceof PluginError ? error.message.replace(/^\[plugin [^\]]*\] /, '') : error.message;
    return new PluginError(code, pluginId, message, { action, cause: error, details: { ...error.details, ...(code !== error.code ? { raised: error.code } : {}) } });
  }
  const message = withoutAbsolutePaths(error);
  // A plugin cannot import the kernel's class (an installed plugin has no node_modules): an Error whose
  // `code` is one of these chooses the status too, as README says (every such error was 500 PLUGIN_ERROR).
  const raised = raisableCode(error);
  if (raised !== undefined) {
    const details = (error as { details?: unknown }).details;
    return new PluginError(raised, pluginId, message, { action, cause: error, ...(details !== null && typeof details === 'object' && !Array.isArray(details) ? { details: { ...(details as Record<string, unknown>) } } : {}) });
  }
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return new PluginError('PLUGIN_ERROR', pluginId, message, { action, cause: error, ...(typeof code === 'string' ? { details: { errorCode: code } } : {}) });
}

/**
 * A system error's message names the file by its absolute path (`ENAMETOOLONG: name too long, stat
 * '/home/me/notes/data/…'`): the caller (an agent, whose words go to a model) is told its last part only.
 */
function withoutAbsolutePaths(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let message = error.message;
  for (const key of ['path', 'dest'] as const) {
    const path = (error as { path?: unknown; dest?: unknown })[key];
    if (typeof path === 'string' && isAbsolute(path)) message = message.split(path).join(`…${sep}${basename(path)}`);
  }
  return message;
}

/** The code an Error a plugin threw carries, when it is one a plugin may raise. */
function raisableCode(error: unknown): ErrorCode | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return isRaisableCode(code) ? code : undefined;
}
