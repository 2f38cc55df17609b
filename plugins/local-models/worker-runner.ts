import { Worker } from 'node:worker_threads';
import { KernelError, type ErrorCode } from '../../core/index.js';
import type { EmbedOptions, EmbedOutput, ModelSpec } from './inference.js';
import type { InferenceRequest, InferenceResponse } from './inference-protocol.js';
import { checkModelFolder } from './model-folder.js';
import type { ModelRunner } from './model-runner.js';

/** A request before it gets its id (Omit over each member of the union). */
type RequestBody = InferenceRequest extends infer R ? R extends unknown ? Omit<R, 'id'> : never : never;

interface Job {
  readonly id: number;
  readonly body: RequestBody;
  readonly urgent: boolean;
  resolve(response: InferenceResponse & { ok: true }): void;
  reject(error: unknown): void;
}

/**
 * How long one run may take, loading the model included, before its worker is ended: a run cannot be
 * interrupted, and a wedged one held every later request (search queries, the indexer) for ever.
 */
const RUN_DEADLINE_MS = 10 * 60_000;
/** How long an overdue worker's end is waited for before the next request starts a new one. */
const TERMINATE_WAIT_MS = 5_000;

/**
 * One worker per model, started on first use, given one request at a time: the requests wait here, so
 * that an urgent one (a search query) goes before the indexer's batches that wait, and one whose caller
 * gave up is dropped unsent. A caller that gives up while its request runs is answered at once and the
 * worker's answer is dropped when it comes (a run cannot be interrupted, and ending the worker would
 * throw the loaded model away). The worker holds the process open only while it has work.
 */
export class WorkerRunner implements ModelRunner {
  private worker: Worker | undefined;
  private readonly waiting: Job[] = [];
  /** Sent to the worker and not answered yet; `job` is undefined once its caller gave up. */
  private running: { id: number; job: Job | undefined; deadline: NodeJS.Timeout } | undefined;
  private nextId = 0;

  constructor(private readonly spec: ModelSpec, private readonly script: URL, private readonly deadlineMs = RUN_DEADLINE_MS) {}

  async embed(texts: string[], options: EmbedOptions, signal?: AbortSignal, urgent = false): Promise<EmbedOutput> {
    return (await this.request({ op: 'embed', texts, options }, signal, urgent)).embedded!;
  }

  async score(query: string, documents: string[], signal?: AbortSignal): Promise<Float32Array> {
    return (await this.request({ op: 'score', query, documents }, signal, true)).scores!;
  }

  async dispose(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new KernelError('MODEL_UNAVAILABLE', `model '${this.spec.model}' was released`));
    await worker?.terminate();
  }

  private request(body: RequestBody, signal: AbortSignal | undefined, urgent: boolean): Promise<InferenceResponse & { ok: true }> {
    signal?.throwIfAborted();
    // Checked here so that a missing model is said at once, without starting a thread to find out.
    checkModelFolder(this.spec.modelsDir, this.spec.model, this.spec.dtype);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiting.indexOf(job);
        if (at >= 0) this.waiting.splice(at, 1);
        if (this.running?.job === job) this.running.job = undefined;
        reject(signal?.reason);
      };
      const job: Job = {
        id: this.nextId++, body, urgent,
        resolve: (response) => { signal?.removeEventListener('abort', onAbort); resolve(response); },
        reject: (error) => { signal?.removeEventListener('abort', onAbort); reject(error); },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Urgent requests keep their order among themselves, ahead of every ordinary one.
      const before = urgent ? this.waiting.findIndex((other) => !other.urgent) : -1;
      if (before >= 0) this.waiting.splice(before, 0, job);
      else this.waiting.push(job);
      this.pump();
    });
  }

  private pump(): void {
    if (this.running) return;
    const job = this.waiting.shift();
    if (!job) {
      this.worker?.unref();
      return;
    }
    const worker = this.started();
    this.running = { id: job.id, job, deadline: setTimeout(() => void this.overdue(job.id), this.deadlineMs) };
    worker.ref();
    worker.postMessage({ ...job.body, id: job.id } as InferenceRequest);
  }

  private answered(response: InferenceResponse): void {
    if (response.id !== this.running?.id) return;
    const { job } = this.running;
    clearTimeout(this.running.deadline);
    this.running = undefined;
    if (job && response.ok) job.resolve(response);
    else if (job && !response.ok) job.reject(new KernelError(response.error.code as ErrorCode, response.error.message, { details: response.error.details as Record<string, unknown> | undefined }));
    this.pump();
  }

  /** A run past its deadline: its worker (and the model it holds) is ended, and the next request gets a new one. */
  private async overdue(id: number): Promise<void> {
    if (this.running?.id !== id) return;
    const { job } = this.running;
    const worker = this.worker;
    this.worker = undefined;
    this.running = undefined;
    job?.reject(new KernelError('MODEL_UNAVAILABLE', `model '${this.spec.model}' did not answer within ${Math.round(this.deadlineMs / 1000)} s; its worker was ended, and the next request loads it again`));
    // Ended before the next one loads the model again (not two copies at once), but not waited for long: a
    // run stuck in native code may not stop, and it must neither hold the process open nor the queue.
    worker?.unref();
    await Promise.race([worker?.terminate(), new Promise((resolve) => setTimeout(resolve, TERMINATE_WAIT_MS).unref())]);
    this.pump();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.script, { workerData: this.spec });
    worker.on('message', (response: InferenceResponse) => this.answered(response));
    const stopped = (error: Error): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(new KernelError('MODEL_UNAVAILABLE', `the worker running model '${this.spec.model}' stopped: ${error.message}`, { cause: error }));
    };
    worker.on('error', stopped);
    worker.on('exit', (code) => stopped(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private failAll(error: KernelError): void {
    const jobs = [...(this.running?.job ? [this.running.job] : []), ...this.waiting.splice(0)];
    if (this.running) clearTimeout(this.running.deadline);
    this.running = undefined;
    for (const job of jobs) job.reject(error);
  }
}
