import type { ModelEvent, ModelProvider, ModelRequest } from '../../core/turn/model-provider.js';

/**
 * A model that answers from a script, one list of events per request, and keeps the requests it got:
 * the turn loop's logic is tested against it (the real SDKs are tested against wire-format fakes).
 */
export function scriptedProvider(rounds: ModelEvent[][]): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: 'scripted',
    requests,
    async *stream(request, signal) {
      requests.push(structuredClone(request));
      const events = rounds[requests.length - 1];
      if (!events) throw new Error(`the script has no answer for request ${requests.length}`);
      for (const event of events) {
        if (signal.aborted) return;
        yield event;
      }
    },
  };
}

/**
 * A model that answers each request by what it asks (a summary or a round), keeping the requests it
 * got; `respond` may throw (a ModelError) to fail a request before anything streams.
 */
export function respondingProvider(respond: (request: ModelRequest, index: number) => ModelEvent[], id = 'responding'): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id,
    requests,
    async *stream(request, signal) {
      requests.push(structuredClone(request));
      for (const event of respond(request, requests.length - 1)) {
        if (signal.aborted) return;
        yield event;
      }
    },
  };
}

/** A round in which the model calls tools, each with JSON arguments. */
export function toolCalls(...calls: { id: string; name: string; args: unknown }[]): ModelEvent[] {
  return [
    ...calls.flatMap((call, index): ModelEvent[] => [
      { type: 'tool_call_start', index, id: call.id, name: call.name },
      { type: 'tool_call_delta', index, argumentsDelta: JSON.stringify(call.args) },
      { type: 'tool_call_end', index },
    ]),
    { type: 'finish', reason: 'tool_calls' },
  ];
}

/** A round in which the model answers in text. */
export function answer(text: string): ModelEvent[] {
  return [{ type: 'text', delta: text }, { type: 'usage', promptTokens: 10, completionTokens: 5 }, { type: 'finish', reason: 'stop' }];
}
