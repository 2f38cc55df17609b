import { EngineHost, isQuery, type EngineReply, type EngineRequest } from './ann-protocol.js';
import { compiledScript, startWorker } from '../../../core/index.js';

/** Carries requests to the engine, in order (queries may overtake waiting writes). */
export interface EngineTransport {
  call(request: EngineRequest, transfer?: ArrayBuffer[]): Promise<EngineReply>;
  close(): Promise<void>;
  /** Why no call can be answered any more (the worker stopped or failed), or undefined. */
  failure(): Error | undefined;
}

/** The engine on the calling thread: each call runs at once, synchronously, inside a promise. */
export function mainThreadTransport(): EngineTransport {
  const host = new EngineHost();
  return {
    call: async (request) => host.handle(request),
    close: async () => void host.handle({ op: 'close' }),
    failure: () => undefined,
  };
}

interface Job {
  readonly id: number;
  readonly request: EngineRequest;
  readonly transfer: ArrayBuffer[];
  resolve(reply: EngineReply): void;
  reject(error: Error): void;
}

type WorkerAnswer = { id: number; ok: true; reply: EngineReply } | { id: number; ok: false; message: string };

/**
 * The engine on its own worker thread. One request at a time is in the worker; the rest wait here in
 * two lanes, so that a query waits for at most the write running now, not for every write queued.
 * While a request runs the worker holds the process open; when idle it does not.
 */
export function workerTransport(): EngineTransport {
  const script = workerScript();
  const worker = startWorker(script);
  const queries: Job[] = [];
  const writes: Job[] = [];
  let running: Job | undefined;
  let broken: Error | undefined;
  let nextId = 0;

  const fail = (error: Error): void => {
    broken ??= error;
    for (const job of [...(running ? [running] : []), ...queries.splice(0), ...writes.splice(0)]) job.reject(broken);
    running = undefined;
  };
  const pump = (): void => {
    if (running || broken) return;
    const job = queries.shift() ?? writes.shift();
    if (!job) return void worker.unref();
    running = job;
    worker.ref();
    worker.postMessage({ id: job.id, request: job.request }, job.transfer);
  };
  worker.on('message', (answer: WorkerAnswer) => {
    const job = running;
    if (!job || answer.id !== job.id) return fail(new Error('the ANN worker answered another request (is the build complete?)'));
    running = undefined;
    if (answer.ok) job.resolve(answer.reply);
    else job.reject(new Error(answer.message));
    pump();
  });
  worker.on('error', (error) => fail(new Error(`the ANN worker failed: ${error.message}`)));
  worker.on('exit', (code) => fail(new Error(`the ANN worker stopped (exit code ${code})`)));
  // After the listeners: adding a message listener holds the process open again.
  worker.unref();

  return {
    call(request, transfer = []) {
      return new Promise<EngineReply>((resolve, reject) => {
        if (broken) return reject(broken);
        (isQuery(request) ? queries : writes).push({ id: nextId++, request, transfer, resolve, reject });
        pump();
      });
    },
    async close() {
      if (!broken) {
        const done = new Promise<EngineReply>((resolve, reject) => {
          writes.push({ id: nextId++, request: { op: 'close' }, transfer: [], resolve, reject });
          pump();
        });
        await done.catch(() => undefined);
      }
      broken ??= new Error('the ANN index is closed');
      await worker.terminate();
    },
    failure: () => broken,
  };
}

function workerScript(): URL {
  const script = compiledScript(import.meta.url, 'ann-worker.js', '../../../dist/plugins/search-semantic/ann/ann-worker.js');
  if (!script) throw new Error('ann-worker.js is missing: run npm run build');
  return script;
}
