export interface SseEvent { event: string; data: Record<string, unknown> }

/** Reads an SSE response event by event, calling `onEvent` as each arrives. */
export async function readEvents(response: Response, onEvent: (event: SseEvent) => Promise<void> | void = () => undefined): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Record<string, unknown>;
      events.push({ event, data });
      await onEvent({ event, data });
    }
  }
  return events;
}
