/**
 * What an event stream may hold for a client that does not read (a paused process, a closed lid): room
 * for one large answer (a call's result travels as one event of a POST's stream), as a plugin's frames.
 */
export const MAX_UNREAD_BYTES = 64 * 1024 * 1024;

/**
 * An event stream of the MCP SDK passed on to a client, read from the SDK as fast as it writes and held
 * here up to `limit` bytes the client has not read: the SDK enqueues events (resource updates, list
 * changes, progress) without looking at backpressure, so a stalled client's stream grew without bound.
 * Past the limit the stream ends (the client reconnects and resumes, as after any drop). `ended` is
 * called once, however it ends.
 */
export function boundedEventStream(source: ReadableStream<Uint8Array>, ended: () => void, limit = MAX_UNREAD_BYTES): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const queued: Uint8Array[] = [];
  let bytes = 0;
  let done = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const woken = (): void => { const next = wake; wake = undefined; next?.(); };
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    ended();
  };
  void (async () => {
    try {
      for (;;) {
        const { value, done: over } = await reader.read();
        if (over) break;
        queued.push(value);
        bytes += value.length;
        if (bytes > limit) throw new Error(`the client read nothing of ${bytes} bytes of events; the stream was closed`);
        woken();
      }
    } catch (error) {
      failure = error;
      await reader.cancel(error).catch(() => undefined);
    } finally {
      done = true;
      woken();
    }
  })();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (queued.length === 0 && !done) await new Promise<void>((resolve) => { wake = resolve; });
      const chunk = queued.shift();
      if (chunk && failure === undefined) {
        bytes -= chunk.length;
        controller.enqueue(chunk);
        return;
      }
      if (failure !== undefined) controller.error(failure);
      else controller.close();
      finish();
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason).catch(() => undefined);
    },
  }, { highWaterMark: 0 });
}
