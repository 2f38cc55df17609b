import type { EmbedOptions, EmbedOutput } from './inference.js';

/** Main thread → inference worker. The worker's `workerData` is the ModelSpec it serves. */
export type InferenceRequest =
  | { id: number; op: 'embed'; texts: string[]; options: EmbedOptions }
  | { id: number; op: 'score'; query: string; documents: string[] };

/** Inference worker → main thread: the answer to request `id`. */
export type InferenceResponse =
  | { id: number; ok: true; embedded?: EmbedOutput; scores?: Float32Array }
  | { id: number; ok: false; error: { code: string; message: string; details?: unknown } };
