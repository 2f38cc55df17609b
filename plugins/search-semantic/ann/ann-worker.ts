import { parentPort } from 'node:worker_threads';
import { EngineHost, type EngineRequest } from './ann-protocol.js';

/** The worker thread that holds the usearch graph (see AnnThread in ann-index.ts). */
const host = new EngineHost();
parentPort?.on('message', (message: { id: number; request: EngineRequest }) => {
  try {
    const reply = host.handle(message.request);
    const buffers = reply.matches ? [reply.matches.keys.buffer, reply.matches.distances.buffer] : [];
    parentPort?.postMessage({ id: message.id, ok: true, reply }, buffers as ArrayBuffer[]);
  } catch (error) {
    parentPort?.postMessage({ id: message.id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
