import { KernelError, NotFoundError, isKernelError } from '../errors.js';
import { isValidId, newId } from '../ids.js';
import type { Logger } from '../log.js';
import type { Principal, ProgressUpdate, StopReason } from '../plugin-api.js';
import { JobStore } from './job-store.js';
import { isFinished, type JobEvent, type JobRecord, type JobState } from './job-types.js';

/** What a job is started for: the action and who asked. */
export interface JobSubject {
  action: string;
  plugin: string;
  tool: string;
  name: string;
  principal: Principal;
}

/** The handle the work of a job gets: its signal, and where to report progress and a stop. */
export interface JobControl {
  readonly id: string;
  readonly signal: AbortSignal;
  progress(update: ProgressUpdate): void;
  stopped(reason: StopReason): void;
  /** The call was answered without its work (stopped, it did not stop within its grace): `late` may follow. */
  abandoned(): void;
  /** How work the call was answered without ended after all. */
  late(outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): void;
}

export interface StartedJob {
  readonly record: JobRecord;
  /** The action's answer, or its error. */
  readonly done: Promise<unknown>;
}

interface Live {
  record: JobRecord;
  controller: AbortController;
  listeners: Set<(event: JobEvent) => void>;
  lastWrite: number;
  done: Promise<unknown>;
  /** Settles when the record is final: the work ended (answered, or later), or the kernel closed. */
  ended: Promise<void>;
  markEnded(): void;
  /** Answered without its work, which goes on: ended by its late outcome, the cap, or the kernel closing. */
  abandoned?: NodeJS.Timeout;
}

/** Progress is written to disk at most this often; the end always is. */
const PROGRESS_WRITE_MS = 1_000;

/**
 * Long work as jobs (DESIGN.md §1): each has a durable record with its progress, can be cancelled,
 * and is watched by whoever wants (an SSE stream, an MCP client, a turn, the CLI). Records outlive
 * the kernel; at the next start a job that was running is marked `interrupted`.
 */
export class JobManager {
  private readonly live = new Map<string, Live>();
  private readonly finished = new Map<string, JobRecord>();
  private readonly store: JobStore;
  /** Set by `close`: no job starts any more. */
  private closing = false;
  /** The jobs `close` stopped: one that stops for it (or does not answer) is interrupted, not cancelled. */
  private readonly stoppedByClose = new Set<string>();

  /**
   * `abandonedLimitMs`: how long a job whose work did not stop when asked stays running for it (the job
   * time limit): then it ends, saying its work may still be running.
   */
  constructor(dir: string, private readonly keep: number, private readonly log: Logger, private readonly abandonedLimitMs = 3_600_000) {
    this.store = new JobStore(dir, log);
  }

  /** Reads the records; those left `running` by a kernel that stopped become `interrupted`. */
  async load(): Promise<void> {
    const records = await this.store.readAll();
    for (const record of records) {
      if (record.state === 'running') {
        const now = new Date().toISOString();
        Object.assign(record, { state: 'interrupted' satisfies JobState, updated: now, ended: now, error: interruptedError(record.progress) });
        await this.store.write(record);
        this.log.warn('a job was interrupted when the kernel stopped', { job: record.id, action: record.action });
      }
      this.finished.set(record.id, record);
    }
    await this.prune();
  }

  /** Starts `work` as a job; it runs until it ends, its time limit, or a cancel. */
  start(subject: JobSubject, work: (control: JobControl) => Promise<unknown>): StartedJob {
    // A job started while the kernel closes would run past the workspace's lock: refused, as nothing began.
    if (this.closing) throw new KernelError('NOT_READY', `the kernel is closing: ${subject.name} was not started`, { details: { action: subject.name } });
    const now = new Date().toISOString();
    const { principal } = subject;
    const record: JobRecord = {
      id: newId(), action: subject.action, plugin: subject.plugin, tool: subject.tool, name: subject.name, startedBy: principal.name,
      ...(principal.sessionId !== undefined ? { sessionId: principal.sessionId } : {}),
      ...(principal.turnId !== undefined ? { turnId: principal.turnId } : {}),
      state: 'running', created: now, updated: now, progress: { done: 0 },
    };
    const controller = new AbortController();
    let markEnded = (): void => undefined;
    const ended = new Promise<void>((resolve) => { markEnded = resolve; });
    const live: Live = { record, controller, listeners: new Set(), lastWrite: Date.now(), done: Promise.resolve(), ended, markEnded };
    this.live.set(record.id, live);
    void this.store.write(record);
    const control: JobControl = {
      id: record.id,
      signal: controller.signal,
      progress: (update) => this.progress(live, update),
      stopped: (reason) => { live.record.stopped = reason; },
      abandoned: () => {
        if (isFinished(live.record.state) || live.abandoned) return;
        const code = live.record.stopped === 'cancelled' ? 'ACTION_CANCELLED' : 'ACTION_TIMEOUT';
        const error = new KernelError(code, `${subject.name} did not stop when asked and may still be running: its effects are unknown`, { details: { stillRunning: true } });
        live.abandoned = setTimeout(() => { this.end(live, 'failed', { error }).catch((failure: unknown) => this.log.warn('a job\'s end could not be recorded', { job: live.record.id, error: String(failure) })); }, this.abandonedLimitMs);
        live.abandoned.unref();
      },
      late: (outcome) => {
        const ended = outcome.ok ? this.end(live, 'succeeded', { result: outcome.value }) : this.end(live, 'failed', { error: outcome.error });
        ended.catch((failure: unknown) => this.log.warn('a job\'s end could not be recorded', { job: live.record.id, error: String(failure) }));
      },
    };
    // The answer is given once the final record is on disk, so a client that reads the record next finds it.
    live.done = work(control).then(
      async (value) => { await this.end(live, 'succeeded', { result: value }); return value; },
      async (error: unknown) => {
        // Answered without its work, which did not stop within its grace (a rollback past its point of no
        // return; told by the pipeline, never read from an error's details, which a plugin can set): the
        // record stays running, stopping, until the work ends (`late`), its cap, or the kernel closes.
        if (!live.abandoned) await this.end(live, 'failed', { error });
        else if (!isFinished(live.record.state)) {
          live.record.updated = new Date().toISOString();
          void this.store.write(live.record);
        }
        throw error;
      },
    );
    live.done.catch(() => undefined);
    return { record, done: live.done };
  }

  /** A job by id: the running one, or its record. */
  get(id: string): JobRecord {
    const found = isValidId(id) ? (this.live.get(id)?.record ?? this.finished.get(id)) : undefined;
    if (!found) throw new NotFoundError('JOB_NOT_FOUND', `No job with id '${id}'`, { details: { id } });
    return found;
  }

  /** Every job known, newest first. */
  list(): JobRecord[] {
    return [...this.live.values()].map((live) => live.record).concat([...this.finished.values()]).sort((a, b) => b.id.localeCompare(a.id));
  }

  /** Asks a running job to stop at its next safe point; answers its record (unchanged if it had ended). */
  cancel(id: string): JobRecord {
    const record = this.get(id);
    const live = this.live.get(id);
    if (live && !live.controller.signal.aborted) live.controller.abort(new KernelError('ACTION_CANCELLED', `job ${id} was cancelled`));
    return record;
  }

  /** Calls `listener` with each progress report and the end; returns the unsubscribe. */
  watch(id: string, listener: (event: JobEvent) => void): () => void {
    const live = this.live.get(id);
    if (!live) return () => undefined;
    live.listeners.add(listener);
    return () => live.listeners.delete(listener);
  }

  /** Stops every running job and waits for them (bounded): what has not ended is recorded as interrupted. */
  async close(waitMs: number): Promise<void> {
    this.closing = true;
    const running = [...this.live.values()];
    for (const live of running) {
      this.stoppedByClose.add(live.record.id);
      live.controller.abort(new KernelError('ACTION_CANCELLED', 'the kernel is closing'));
    }
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); });
    await Promise.race([Promise.all(running.map((live) => live.ended)), limit]);
    clearTimeout(timer);
    for (const live of [...this.live.values()]) await this.end(live, 'interrupted', {});
    await this.store.flush();
  }

  private progress(live: Live, update: ProgressUpdate): void {
    if (isFinished(live.record.state)) return;
    live.record.progress = {
      done: update.done, ...(update.total !== undefined ? { total: update.total } : {}), ...(update.message !== undefined ? { message: update.message } : {}),
      ...(update.ifInterrupted !== undefined ? { ifInterrupted: update.ifInterrupted } : {}),
    };
    live.record.updated = new Date().toISOString();
    if (Date.now() - live.lastWrite >= PROGRESS_WRITE_MS) {
      live.lastWrite = Date.now();
      void this.store.write(live.record);
    }
    this.tell(live, { type: 'progress', job: live.record });
  }

  private async end(live: Live, state: JobState, outcome: { result?: unknown; error?: unknown }): Promise<void> {
    const { record } = live;
    if (isFinished(record.state)) return;
    if (live.abandoned) clearTimeout(live.abandoned);
    const now = new Date().toISOString();
    // Said by what the work did, not by what it was asked: a job asked to stop that answered having done
    // everything (a cancel after a rollback's point of no return) succeeded; one that stopped at a safe
    // point says why, with what its answer says it did. Only work still running when the kernel's wait
    // ended is interrupted, with the same words as a job a crash cut short. One that failed on its own
    // meanwhile (a full disk) keeps its error.
    // A handler that failed on its stop (Node's AbortError from a timer or a stream) stopped for it; one
    // that failed otherwise after a stop (a full disk) failed, and keeps its error.
    const stop = state === 'interrupted' ? undefined : stopOf(outcome) ?? (isAbort(outcome.error) ? record.stopped : undefined);
    record.state = state === 'interrupted' ? 'interrupted' : stop === 'time_limit' ? 'timed_out' : stop === 'cancelled' ? 'cancelled' : state;
    if (stop) record.stopped = stop;
    else if (state !== 'interrupted') delete record.stopped;
    record.updated = now;
    record.ended = now;
    if (outcome.result !== undefined) record.result = outcome.result;
    if (state === 'interrupted') record.error = interruptedError(record.progress);
    else if (stop && this.stoppedByClose.has(record.id)) record.error = { code: 'ACTION_CANCELLED', message: `the kernel was closing: this job stopped at a safe point, ${outcome.result !== undefined ? `after ${describeProgress(record.progress)}; its result says what it did` : 'before writing anything'}` };
    else if (outcome.error !== undefined) record.error = errorOf(outcome.error);
    this.live.delete(record.id);
    this.finished.set(record.id, record);
    // Watchers hear of the end once it is on disk.
    await this.store.write(record);
    live.markEnded();
    this.tell(live, { type: 'end', job: record });
    live.listeners.clear();
    await this.prune(record.id);
  }

  private tell(live: Live, event: JobEvent): void {
    for (const listener of live.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log.warn('a job watcher failed', { job: live.record.id, error: (error as Error).message });
      }
    }
  }

  /**
   * Keeps the `keep` records that ended last, and always `justEnded`: by when they started, a long job
   * that ended after more than `keep` newer ones was removed as it ended, and its caller, waiting for its
   * answer, was told it did not exist.
   */
  private async prune(justEnded?: string): Promise<void> {
    const endedAt = (record: JobRecord) => record.ended ?? record.updated ?? record.created;
    const records = [...this.finished.values()].sort((a, b) => (endedAt(a) < endedAt(b) ? -1 : endedAt(a) > endedAt(b) ? 1 : a.id.localeCompare(b.id)));
    for (const record of records.slice(0, Math.max(0, records.length - this.keep))) {
      if (record.id === justEnded) continue;
      this.finished.delete(record.id);
      await this.store.remove(record.id);
    }
  }
}

/** Why work stopped early, by what it answered: a result saying `stopped`, or a stop's own error. */
function stopOf(outcome: { result?: unknown; error?: unknown }): StopReason | undefined {
  const said = (outcome.result as { stopped?: unknown } | null | undefined)?.stopped;
  if (said === 'cancelled' || said === 'time_limit') return said;
  if (!isKernelError(outcome.error)) return undefined;
  return outcome.error.code === 'ACTION_CANCELLED' ? 'cancelled' : outcome.error.code === 'ACTION_TIMEOUT' ? 'time_limit' : undefined;
}

/** Node's AbortError (`ABORT_ERR`), as thrown or as the cause of the plugin error it was wrapped in. */
function isAbort(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== null && typeof cause === 'object' && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { name, code, details } = cause as { name?: unknown; code?: unknown; details?: { errorCode?: unknown } };
    if (name === 'AbortError' || code === 'ABORT_ERR' || details?.errorCode === 'ABORT_ERR') return true;
  }
  return false;
}

function errorOf(error: unknown): NonNullable<JobRecord['error']> {
  if (isKernelError(error)) return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

/** What a job the kernel's stop cut short says: how far it came, and what its action said a stop leaves. */
function interruptedError(progress: ProgressUpdate): NonNullable<JobRecord['error']> {
  return { code: 'JOB_INTERRUPTED', message: `the kernel stopped while this job ran; it had done ${describeProgress(progress)}${progress.ifInterrupted ? `; ${progress.ifInterrupted}` : ''}` };
}

function describeProgress(progress: ProgressUpdate): string {
  return progress.total !== undefined ? `${progress.done} of ${progress.total}` : `${progress.done}`;
}
