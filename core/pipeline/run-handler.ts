import { KernelError, PluginError, isKernelError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { ActionCall, ProgressUpdate, StopReason } from '../plugin-api.js';
import { runInActionScope, type RunningAction } from '../egress/action-scope.js';
import { DeadlineWatch } from './deadline-watch.js';
import { isCancelled } from './cancel-source.js';
import type { PreparedCall } from './prepared-call.js';

export interface RunOptions {
  timeoutMs: number;
  /** How long a stopped handler that watches its stop is waited for, to report what it really did. */
  stopGraceMs: number;
  log: Logger;
  onRefused(target: string): void;
  onProgress?: (update: ProgressUpdate) => void;
  /** Told when the call was stopped (time limit or cancel) and its handler was waited for. */
  onStopped?: (reason: StopReason) => void;
}

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
  const { entry } = call;
  return new Promise((resolve, reject) => {
    // The handler's signal is created only if the handler asks for it: most never do, and an
    // AbortSignal per call costs more than the rest of a read action's path.
    let controller: AbortController | undefined;
    let stopReason: KernelError | undefined;
    let stopKind: StopReason | undefined;
    // Native handlers stop at safe points by construction (every write checks at its turn in the write
    // queue), and a long action's job must account for its work: both are waited for once stopped.
    let watchesStop = entry.source === 'native' || entry.spec.long === true;
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      deadlines.clear(watched);
      if (grace) clearTimeout(grace);
      return true;
    };
    const stop = (kind: StopReason, error: KernelError): void => {
      if (settled || stopKind !== undefined) return;
      stopKind = kind;
      stopReason = error;
      controller?.abort(error);
      if (!watchesStop) {
        if (settle()) reject(stillRunning(error));
        return;
      }
      options.onStopped?.(kind);
      grace = setTimeout(() => { if (settle()) reject(stillRunning(error)); }, options.stopGraceMs);
      grace.unref();
    };
    const onCallerAbort = (): void => stop('cancelled', new KernelError('ACTION_CANCELLED', `${entry.wireName} was cancelled`));
    if (call.cancel && isCancelled(call.cancel)) {
      settled = true;
      return reject(new KernelError('ACTION_CANCELLED', `${entry.wireName} was cancelled before it started`));
    }
    const watched = deadlines.watch({
      timeoutMs: options.timeoutMs,
      cancel: call.cancel,
      onCancel: onCallerAbort,
      onTimeout: () => stop('time_limit', new KernelError('ACTION_TIMEOUT', `${entry.wireName} did not finish within ${options.timeoutMs} ms`, { details: { timeoutMs: options.timeoutMs } })),
    });
    const onProgress = options.onProgress;
    const actionCall: ActionCall = {
      callId: call.id,
      principal: call.principal,
      deniedNotebooks: call.deniedNotebooks,
      log: options.log,
      get signal(): AbortSignal {
        watchesStop = true;
        if (!controller) {
          controller = new AbortController();
          if (stopReason) controller.abort(stopReason);
        }
        return controller.signal;
      },
      get stopped(): StopReason | undefined {
        watchesStop = true;
        return stopKind;
      },
      progress(update: ProgressUpdate): void {
        if (onProgress && !settled) onProgress(update);
      },
    };
    const scope: RunningAction = {
      plugin: entry.pluginId, tool: entry.tool, action: entry.action, declaredEffects: entry.declaredEffects,
      onRefused: (_kind, target) => options.onRefused(target),
    };
    // Inside the scope so that everything the handler starts, sync or async, is attributed to it.
    runInActionScope(scope, () => {
      try {
        Promise.resolve(entry.handler(call.input, actionCall)).then(
          (value) => { if (settle()) resolve(value); },
          (error: unknown) => { if (settle()) reject(wrapPluginError(error, entry.pluginId, `${entry.tool}.${entry.action}`)); },
        );
      } catch (error) {
        if (settle()) reject(wrapPluginError(error, entry.pluginId, `${entry.tool}.${entry.action}`));
      }
    });
  });
}

/** A stopped call whose handler did not stop: its effects are unknown, and retrying may repeat them. */
function stillRunning(error: KernelError): KernelError {
  return new KernelError(error.code, `${error.message}; it did not stop, so it may still be running and what it changed is unknown: check before retrying`, { details: { ...error.details, stillRunning: true } });
}

/** The codes a plugin's own error may carry to its caller; anything else becomes PLUGIN_ERROR. */
const PLUGIN_RAISABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_INPUT', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'EGRESS_DENIED', 'CAPABILITY_DENIED',
  'WORKSPACE_READ_ONLY', 'ACTION_TIMEOUT', 'ACTION_CANCELLED', 'PLUGIN_ERROR', 'DISK_FULL',
]);

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
  const message = error instanceof Error ? error.message : String(error);
  return new PluginError('PLUGIN_ERROR', pluginId, message, { action, cause: error });
}
