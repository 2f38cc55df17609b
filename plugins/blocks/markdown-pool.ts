import { Worker } from 'node:worker_threads';
import type { ParseRequest, ParseResponse, ParseWork } from './markdown-parser.js';

interface Job {
  readonly request: ParseRequest;
  readonly signal: AbortSignal | undefined;
  resolve(response: ParseResponse): void;
  reject(error: unknown): void;
  onAbort?: () => void;
  slot?: Slot;
}

interface Slot {
  readonly worker: Worker;
  job?: Job;
}

/**
 * Markdown workers, started on first use (most kernels never import anything nor get long Markdown)
 * and kept while idle. Each runs one job at a time: jobs wait here, not in a worker's message queue,
 * so that a job whose caller gives up before it starts is simply dropped, and one whose caller gives
 * up while it runs ends its worker (a parse cannot be interrupted otherwise) without touching the
 * others. A busy worker holds the process open until it answers; an idle one does not.
 */
export class WorkerPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly script: URL, private readonly size: number) {}

  run(work: ParseWork, signal?: AbortSignal): Promise<ParseResponse> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the Markdown parser is closed'));
      if (signal?.aborted) return reject(signal.reason);
      const job: Job = { request: { ...work, id: this.nextId++ }, signal, resolve, reject };
      if (signal) {
        job.onAbort = () => this.abandon(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job).reject(new Error('the Markdown parser was closed'));
    const running = [...this.slots];
    this.slots.clear();
    await Promise.all(running.map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    while (!this.closed && this.queue.length > 0) {
      let slot = [...this.slots].find((candidate) => !candidate.job);
      if (!slot && this.slots.size < this.size) slot = this.start();
      if (!slot) return;
      const job = this.queue.shift()!;
      job.slot = slot;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage(job.request);
    }
  }

  private start(): Slot {
    const slot: Slot = { worker: new Worker(this.script) };
    slot.worker.unref();
    slot.worker.on('message', (response: ParseResponse) => {
      const job = slot.job;
      if (!job) return;
      if (response?.id !== job.request.id) {
        // Not the answer to its job (a worker script of another build, half rebuilt under a running
        // kernel): waiting for the right one would hold the job, and the process with it, for ever.
        this.slots.delete(slot);
        this.settle(job).reject(new Error('the Markdown worker answered with something else than its job (is the build complete?)'));
        void slot.worker.terminate();
        this.pump();
        return;
      }
      this.settle(job).resolve(response);
      this.pump();
    });
    const fail = (error: Error): void => {
      this.slots.delete(slot);
      const job = slot.job;
      if (job) this.settle(job).reject(error);
      this.pump();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`the Markdown worker stopped (exit code ${code})`)));
    this.slots.add(slot);
    return slot;
  }

  /** The caller gave up (time limit, cancel): drop the job, or end the worker running it. */
  private abandon(job: Job): void {
    const slot = job.slot;
    this.settle(job).reject(job.signal?.reason);
    if (slot) {
      this.slots.delete(slot);
      void slot.worker.terminate();
    } else {
      const at = this.queue.indexOf(job);
      if (at !== -1) this.queue.splice(at, 1);
    }
    this.pump();
  }

  /** Detaches a job from its signal and its worker, once, before it is answered. */
  private settle(job: Job): Pick<Job, 'resolve' | 'reject'> {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    const slot = job.slot;
    if (slot) {
      slot.job = undefined;
      slot.worker.unref();
      job.slot = undefined;
    }
    return job;
  }
}
