// A worker thread that runs one model: inference is synchronous native code (150 ms and more for a
// batch of 32 paragraphs), which would stop the kernel's event loop for as long.
import { parentPort, workerData } from 'node:worker_threads';
import { isKernelError } from '../../core/errors.js';
import { loadModel, type LoadedModel, type ModelSpec } from './inference.js';
import type { InferenceRequest, InferenceResponse } from './inference-protocol.js';

const spec = workerData as ModelSpec;
let model: Promise<LoadedModel> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function loaded(): Promise<LoadedModel> {
  // A failed load is tried again on the next request: the model may have been pulled meanwhile.
  model ??= loadModel(spec).catch((error: unknown) => { model = undefined; throw error; });
  return model;
}

async function answer(request: InferenceRequest): Promise<InferenceResponse> {
  try {
    const running = await loaded();
    if (request.op === 'embed') return { id: request.id, ok: true, embedded: await running.embed(request.texts, request.options) };
    return { id: request.id, ok: true, scores: await running.score(request.query, request.documents) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { id: request.id, ok: false, error: isKernelError(error) ? { code: error.code, message, details: error.details } : { code: 'INTERNAL', message } };
  }
}

parentPort?.on('message', (request: InferenceRequest) => {
  // One request at a time, in order: the native session is not run twice at once.
  queue = queue.then(async () => {
    const response = await answer(request);
    const buffer = response.ok ? (response.embedded?.data ?? response.scores)?.buffer : undefined;
    parentPort?.postMessage(response, buffer ? [buffer as ArrayBuffer] : []);
  });
});
