import { Worker } from 'node:worker_threads';

interface Job<W, R> {
  readonly request: W & { id: number };
  readonly signal: AbortSignal | undefined;
  resolve(response: R): void;
  reject(error: unknown): void;
  onAbort?: () => void;
  slot?: Slot<W, R>;
}

interface Slot<W, R> {
  readonly worker: Worker;
  job?: Job<W, R>;
  /** A job given up while it ran, whose answer the worker may still send within the grace period. */
  draining?: { id: number; timer: NodeJS.Timeout };
}

export interface WorkerPoolOptions {
  /** How errors name the workers: "the Markdown worker", "the full-text query worker". */
  name: string;
  /**
   * Workers ended while busy (their caller gave up) that may still be running: a thread inside native
   * code (a SQLite statement) ends only once that code returns. While this many are still running, no
   * new worker starts (new work waits for one of them to end), so that callers giving up again and
   * again never pile up threads: at most `size` + `ending` - 1 threads at once. Default `size`, least 1.
   */
  ending?: number;
  /**
   * How long a worker whose job was given up may take to answer anyway before it is ended (the answer
   * is dropped; the worker then takes the next job). Ending it costs a new thread and whatever it had
   * warmed (a connection's cache), which a search typed letter by letter would pay at every key.
   * Default 0: ended at once.
   */
  graceMs?: number;
}

/** At most this long for the threads of a closed pool to end (a thread inside native code ends when that returns). */
const CLOSE_WAIT_MS = 5_000;

/**
 * Workers started on first use and kept while idle, each running one job at a time: jobs wait here,
 * not in a worker's message queue, so that a job whose caller gives up before it starts is simply
 * dropped, and one whose caller gives up while it runs ends its worker (a job cannot be interrupted
 * otherwise) without touching the others. A busy worker holds the process open until it answers; an
 * idle one does not. Each answer must carry its job's id.
 */
export class WorkerPool<W extends object, R extends { id: number }> {
  private readonly slots = new Set<Slot<W, R>>();
  /** Workers ended while busy whose thread has not exited yet. */
  private readonly ending = new Set<Worker>();
  private readonly queue: Job<W, R>[] = [];
  private nextId = 0;
  private closed = false;
  private readonly start: () => Worker;
  private readonly name: string;
  private readonly endingLimit: number;
  private readonly graceMs: number;

  /** `script` is started as is; a function starts a worker its own way (flags, data, async context). */
  constructor(script: URL | (() => Worker), private readonly size: number, options: Partial<WorkerPoolOptions> = {}) {
    this.start = typeof script === 'function' ? script : () => new Worker(script);
    this.name = options.name ?? 'the worker';
    this.endingLimit = Math.max(1, options.ending ?? size);
    this.graceMs = options.graceMs ?? 0;
  }

  run(work: W, signal?: AbortSignal): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error(`${this.name} pool is closed`));
      if (signal?.aborted) return reject(signal.reason);
      const job: Job<W, R> = { request: { ...work, id: this.nextId++ }, signal, resolve, reject };
      if (signal) {
        job.onAbort = () => this.abandon(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Refuses what waits, ends every worker, and waits (a bounded while) for their threads to exit. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job).reject(new Error(`${this.name} pool was closed`));
    const workers = [...[...this.slots].map((slot) => slot.worker), ...this.ending];
    for (const slot of this.slots) if (slot.draining) clearTimeout(slot.draining.timer);
    this.slots.clear();
    const exited = Promise.all(workers.map((worker) => new Promise<void>((resolve) => {
      if (worker.threadId === -1) return resolve();
      worker.once('exit', () => resolve());
      void worker.terminate();
    })));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS); timer.unref(); })]);
    clearTimeout(timer);
  }

  private pump(): void {
    while (!this.closed && this.queue.length > 0) {
      let slot = [...this.slots].find((candidate) => !candidate.job && !candidate.draining);
      if (!slot && this.slots.size < this.size && this.ending.size < this.endingLimit) {
        try {
          slot = this.startSlot();
        } catch (error) {
          // No thread could be started (resources, a refusal): the next job is answered with why.
          const job = this.queue.shift()!;
          this.settle(job).reject(error);
          continue;
        }
      }
      if (!slot) return;
      const job = this.queue.shift()!;
      job.slot = slot;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage(job.request);
    }
  }

  private startSlot(): Slot<W, R> {
    const slot: Slot<W, R> = { worker: this.start() };
    slot.worker.unref();
    slot.worker.on('message', (response: R) => {
      if (slot.draining && response?.id === slot.draining.id) {
        // The given-up job's answer, in time: dropped, and the worker is free again.
        clearTimeout(slot.draining.timer);
        slot.draining = undefined;
        slot.worker.unref();
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job) return;
      if (response?.id !== job.request.id) {
        // Not the answer to its job (a worker script of another build, half rebuilt under a running
        // kernel): waiting for the right one would hold the job, and the process with it, for ever.
        this.slots.delete(slot);
        this.settle(job).reject(new Error(`${this.name} answered with something else than its job (is the build complete?)`));
        this.end(slot.worker);
        this.pump();
        return;
      }
      this.settle(job).resolve(response);
      this.pump();
    });
    const fail = (error: Error): void => {
      this.slots.delete(slot);
      if (slot.draining) clearTimeout(slot.draining.timer);
      const job = slot.job;
      if (job) this.settle(job).reject(error);
      this.pump();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`${this.name} stopped (exit code ${code})`)));
    this.slots.add(slot);
    return slot;
  }

  /** Ends a worker, counted among those ending until its thread has exited. */
  private end(worker: Worker): void {
    this.ending.add(worker);
    worker.once('exit', () => {
      this.ending.delete(worker);
      this.pump();
    });
    void worker.terminate();
  }

  /**
   * The caller gave up (time limit, cancel): answered at once with the signal's reason. A job not started
   * is dropped; a running one's worker is ended, after the grace period if it does not answer first.
   */
  private abandon(job: Job<W, R>): void {
    const slot = job.slot;
    this.settle(job).reject(job.signal?.reason);
    if (slot) {
      const endIt = (): void => {
        this.slots.delete(slot);
        slot.draining = undefined;
        this.end(slot.worker);
        this.pump();
      };
      if (this.graceMs <= 0) {
        endIt();
        return;
      }
      slot.worker.ref();
      slot.draining = { id: job.request.id, timer: setTimeout(endIt, this.graceMs) };
    } else {
      const at = this.queue.indexOf(job);
      if (at !== -1) this.queue.splice(at, 1);
    }
    this.pump();
  }

  /** Detaches a job from its signal and its worker, once, before it is answered. */
  private settle(job: Job<W, R>): Pick<Job<W, R>, 'resolve' | 'reject'> {
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
