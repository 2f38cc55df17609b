/**
 * Server-sent events read from a fetch response (EventSource cannot send the Authorization header):
 * each `event:`/`data:` record handed on as it arrives.
 */
export async function readEvents(response: Response, onEvent: (type: string, data: unknown) => void): Promise<void> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const record = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let type = 'message';
      const data: string[] = [];
      for (const line of record.split(/\r?\n/)) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      try {
        onEvent(type, JSON.parse(data.join('\n')));
      } catch {
        onEvent(type, data.join('\n'));
      }
    }
  }
}
