import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadModel, type EmbedOptions, type EmbedOutput, type LoadedModel, type ModelSpec } from './inference.js';
import { WorkerRunner } from './worker-runner.js';

/** A model loaded on first use and run somewhere that does not hold up the kernel's event loop. */
export interface ModelRunner {
  /** `urgent`: a search query, run before the batches of the background indexer that wait. */
  embed(texts: string[], options: EmbedOptions, signal?: AbortSignal, urgent?: boolean): Promise<EmbedOutput>;
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
