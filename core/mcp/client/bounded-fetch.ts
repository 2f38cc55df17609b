import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The most of one message a remote MCP server may send: the SDK's own bound on a stdio message. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * `fetch` for a remote MCP server whose bodies are bounded: a JSON answer as a whole, an event stream
 * event by event (up to each blank line). The SDK reads a JSON answer whole (`response.json()`) and
 * buffers an event until its end, without a bound: one 2 GB answer, or one endless `data:` line, took
 * the kernel's memory. Past the bound the body errors, naming it; `onOverflow` is told of a POST's stream.
 */
export function boundedFetch(onOverflow: (error: Error, request: RequestInit | undefined) => void, limit = MAX_MESSAGE_BYTES, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null || [101, 204, 205, 304].includes(response.status)) return response;
    const stream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    let size = 0;
    let previous = 0;
    const bounded = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.length;
        if (stream) {
          // Bytes since the last event boundary (a blank line): the one kept in a buffer.
          for (let i = 0; i < chunk.length; i++) {
            const byte = chunk[i]!;
            if (byte === 10 && previous === 10) size = chunk.length - i - 1;
            if (byte !== 13) previous = byte;
          }
        }
        if (size > limit) {
          const error = new MessageTooLarge(`the MCP server sent ${stream ? 'an event' : 'an answer'} of more than ${limit} bytes; it was not read`);
          controller.error(error);
          // A JSON answer's error reaches the request it answers (the SDK awaits its body); an event stream
          // answering a POST is taken by the SDK for a lost connection, and its requests wait on: told.
          if (stream && init?.method === 'POST') onOverflow(error, init);
          return;
        }
        controller.enqueue(chunk);
      },
    }));
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** A message cut off at the bound. */
export class MessageTooLarge extends Error {}

/** Whether an error is (or wraps) a message cut off at the bound, however the SDK passed it on. */
export function isMessageTooLarge(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) if (at instanceof MessageTooLarge) return true;
  return false;
}
