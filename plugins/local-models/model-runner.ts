import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { KernelError, type ErrorCode } from '../../core/index.js';
import { loadModel, type EmbedOptions, type EmbedOutput, type LoadedModel, type ModelSpec } from './inference.js';
import type { InferenceRequest, InferenceResponse } from './inference-protocol.js';
import { checkModelFolder } from './model-folder.js';

/** A model loaded on first use and run somewhere that does not hold up the kernel's event loop. */
export interface ModelRunner {
  embed(texts: string[], options: EmbedOptions, signal?: AbortSignal): Promise<EmbedOutput>;
  score(query: string, documents: string[], signal?: AbortSignal): Promise<Float32Array>;
  /** Releases the model (and its thread); a later call loads it again. */
  dispose(): Promise<void>;
}

/**
 * On a worker thread when this module runs compiled (the built kernel, where the worker's JavaScript
 * sits beside it), else on this thread (the TypeScript sources under a test runner, which a worker
 * cannot load). Tests of the worker run the built module.
 */
export function createModelRunner(spec: ModelSpec, placement?: 'worker' | 'inline'): ModelRunner {
  const script = new URL('./inference-worker.js', import.meta.url);
  const built = existsSync(fileURLToPath(script));
  // 'inline' on request only: the benchmark that measures what the worker saves the event loop.
  if (!built || placement === 'inline') return new InlineRunner(spec);
  // One core left to the kernel's own thread by default: with onnxruntime on every core, the event loop
  // waited for the CPU (2 cores: batch 256 -> 220 ms and the longest stall 7.8 -> 5.1 ms with 1 thread).
  return new WorkerRunner({ ...spec, threads: spec.threads ?? Math.max(1, availableParallelism() - 1) }, script);
}

class InlineRunner implements ModelRunner {
  private model: Promise<LoadedModel> | undefined;

  constructor(private readonly spec: ModelSpec) {}

  async embed(texts: string[], options: EmbedOptions, signal?: AbortSignal): Promise<EmbedOutput> {
    const model = await this.loaded();
    signal?.throwIfAborted();
    return model.embed(texts, options);
  }

  async score(query: string, documents: string[], signal?: AbortSignal): Promise<Float32Array> {
    const model = await this.loaded();
    signal?.throwIfAborted();
    return model.score(query, documents);
  }

  async dispose(): Promise<void> {
    const model = this.model;
    this.model = undefined;
    await model?.then((loaded) => loaded.dispose(), () => undefined);
  }

  private loaded(): Promise<LoadedModel> {
    this.model ??= loadModel(this.spec).catch((error: unknown) => { this.model = undefined; throw error; });
    return this.model;
  }
}

/** A request before it gets its id (Omit over each member of the union). */
type RequestBody = InferenceRequest extends infer R ? R extends unknown ? Omit<R, 'id'> : never : never;

interface Pending {
  resolve(response: InferenceResponse & { ok: true }): void;
  reject(error: unknown): void;
}

/**
 * One worker per model, started on first use. Requests queue in the worker and run one at a time; a
 * caller that gives up (its signal) is answered at once and the worker's answer is dropped when it
 * comes (a run cannot be interrupted, and ending the worker would throw the loaded model away). The
 * worker holds the process open only while it has work.
 */
class WorkerRunner implements ModelRunner {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly spec: ModelSpec, private readonly script: URL) {}

  async embed(texts: string[], options: EmbedOptions, signal?: AbortSignal): Promise<EmbedOutput> {
    const response = await this.request({ op: 'embed', texts, options }, signal);
    return response.embedded!;
  }

  async score(query: string, documents: string[], signal?: AbortSignal): Promise<Float32Array> {
    const response = await this.request({ op: 'score', query, documents }, signal);
    return response.scores!;
  }

  async dispose(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new KernelError('MODEL_UNAVAILABLE', `model '${this.spec.model}' was released`));
    await worker?.terminate();
  }

  private request(body: RequestBody, signal?: AbortSignal): Promise<InferenceResponse & { ok: true }> {
    signal?.throwIfAborted();
    // Checked here so that a missing model is said at once, without starting a thread to find out.
    checkModelFolder(this.spec.modelsDir, this.spec.model, this.spec.dtype);
    const worker = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => { this.settle(id); reject(signal?.reason); };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (response) => { signal?.removeEventListener('abort', onAbort); resolve(response); },
        reject: (error) => { signal?.removeEventListener('abort', onAbort); reject(error); },
      });
      worker.ref();
      worker.postMessage({ ...body, id } as InferenceRequest);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.script, { workerData: this.spec });
    worker.unref();
    worker.on('message', (response: InferenceResponse) => {
      const pending = this.settle(response.id);
      if (!pending) return;
      if (response.ok) pending.resolve(response);
      else pending.reject(new KernelError(response.error.code as ErrorCode, response.error.message, { details: response.error.details as Record<string, unknown> | undefined }));
    });
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

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    return pending;
  }

  private failAll(error: KernelError): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const pending of all) pending.reject(error);
  }
}
