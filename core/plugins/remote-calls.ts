import { KernelError, isRaisableCode, toKernelError, type ErrorCode } from '../errors.js';
import type { RunningAction } from '../egress/action-scope.js';
import type { ActionCall, ProgressUpdate } from '../plugin-api.js';
import type { ChildMessage, KernelMessage, WireError } from './plugin-ipc.js';

/** What the calls need of the process that runs them. */
export interface CallChannel {
  send(message: KernelMessage): void;
  /** Ends the process (and with it every call in it) because a stopped call did not stop; it is restarted. */
  endForStop(why: string): void;
  stopGraceMs: number;
}

export interface CallRequest {
  tool: string;
  action: string;
  input: Record<string, unknown>;
  call: ActionCall;
  /** The kernel-side scope of the call: refusals reported by the child are audited through it. */
  scope: RunningAction | undefined;
}

interface Pending extends CallRequest {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  watching: boolean;
  graceTimer?: NodeJS.Timeout;
  cleanup(): void;
}

/**
 * The calls in flight in one plugin process. A stop (time limit or cancel) is sent to the child; a
 * handler that watches its stop gets half the stop grace to answer what it did, one that does not
 * (or a child too busy to read the message) has its process ended at once, and the call answers the
 * stop with `stillRunning: false`: a killed process runs nothing any more.
 */
export class RemoteCalls {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly channel: CallChannel) {}

  get size(): number {
    return this.pending.size;
  }

  start(request: CallRequest, principalPart: Pick<ActionCall, 'principal' | 'deniedNotebooks' | 'readOnlyNotebooks'>, deadline: number): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const { signal } = request.call;
      const onAbort = (): void => this.stop(id);
      const pending: Pending = { ...request, resolve, reject, watching: false, cleanup: () => signal.removeEventListener('abort', onAbort) };
      this.pending.set(id, pending);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        this.channel.send({
          type: 'call', id, tool: request.tool, action: request.action, input: request.input,
          principal: principalPart.principal, deniedNotebooks: [...principalPart.deniedNotebooks], readOnlyNotebooks: [...principalPart.readOnlyNotebooks], deadline,
        });
      } catch (error) {
        // Not sent (too large for the channel): the call fails now, not at its time limit.
        this.pending.delete(id);
        pending.cleanup();
        reject(new KernelError('PAYLOAD_TOO_LARGE', `the call cannot be sent to the plugin's process: ${(error as Error).message}`, { details: { stillRunning: false } }));
        return;
      }
      if (signal.aborted) this.stop(id);
    });
  }

  /** Routes a child's message about a call; false when the message is not about calls. */
  onMessage(message: ChildMessage): boolean {
    switch (message.type) {
      case 'result': this.settle(message.id, (pending) => pending.resolve(message.value)); return true;
      case 'error': this.settle(message.id, (pending) => pending.reject(fromWireError(message.error))); return true;
      case 'watching': { const pending = this.pending.get(message.id); if (pending) pending.watching = true; return true; }
      case 'progress': this.pending.get(message.id)?.call.progress(progressOf(message.update)); return true;
      default: return false;
    }
  }

  scopeOf(callId: number): RunningAction | undefined {
    return this.pending.get(callId)?.scope;
  }

  /** The kernel's record of a call still waiting for its answer. */
  callOf(callId: number): ActionCall | undefined {
    return this.pending.get(callId)?.call;
  }

  /** Every call still waiting fails with this (the process ended). */
  failAll(error: KernelError): void {
    for (const id of [...this.pending.keys()]) this.settle(id, (pending) => pending.reject(error));
  }

  private stop(id: number): void {
    const pending = this.pending.get(id);
    if (!pending || pending.graceTimer) return;
    const reason = toKernelError(pending.call.signal.reason, 'ACTION_CANCELLED');
    const kind = reason.code === 'ACTION_TIMEOUT' ? 'time_limit' : 'cancelled';
    this.channel.send({ type: 'cancel', id, reason: kind, error: { message: reason.message, code: reason.code, kernel: true, details: reason.details } });
    if (!pending.watching) return this.kill(id, reason);
    pending.graceTimer = setTimeout(() => this.kill(id, reason), Math.floor(this.channel.stopGraceMs / 2));
    pending.graceTimer.unref();
  }

  private kill(id: number, reason: KernelError): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    const answer = new KernelError(reason.code, `${reason.message}; it did not stop, so its plugin's process was ended and nothing of it runs any more`, { details: { ...reason.details, stillRunning: false } });
    this.settle(id, (settled) => settled.reject(answer));
    const others = new KernelError('PLUGIN_ERROR', `its plugin's process was ended because another call (${pending.tool}.${pending.action}) did not stop; nothing of this call runs any more`, { details: { stillRunning: false } });
    this.failAll(others);
    this.channel.endForStop(`${pending.tool}.${pending.action} did not stop (${reason.code})`);
  }

  private settle(id: number, how: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    if (pending.graceTimer) clearTimeout(pending.graceTimer);
    pending.cleanup();
    how(pending);
  }
}

/** A child's error, as the kernel's: its own codes only when it was a KernelError there; Node's code kept in details. */
export function fromWireError(wire: WireError): KernelError {
  const message = String(wire.message);
  if (wire.kernel === true && typeof wire.code === 'string') return new KernelError(wire.code as ErrorCode, message, { details: { ...wire.details } });
  // A plain Error the plugin gave a code it may raise (it cannot import KernelError): that status, as in process.
  if (isRaisableCode(wire.code)) return new KernelError(wire.code, message, { details: { ...wire.details } });
  return new KernelError('PLUGIN_ERROR', message, { details: { ...wire.details, ...(typeof wire.code === 'string' ? { errorCode: wire.code } : {}) } });
}

/** Progress as the kernel reports it: only the documented fields, whatever the child sent. */
function progressOf(update: ProgressUpdate): ProgressUpdate {
  const done = Number(update?.done);
  return {
    done: Number.isFinite(done) ? done : 0,
    ...(Number.isFinite(Number(update?.total)) && update?.total !== undefined ? { total: Number(update.total) } : {}),
    ...(typeof update?.message === 'string' ? { message: update.message.slice(0, 1000) } : {}),
  };
}
