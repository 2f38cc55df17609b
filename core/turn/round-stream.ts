import type { ModelEvent, ModelProvider, ModelRequest } from './model-provider.js';

export interface StreamedCall {
  id: string;
  name: string;
  arguments: string;
  providerData?: unknown;
}

export interface RoundResult {
  text: string;
  reasoning: string;
  calls: StreamedCall[];
  promptTokens: number;
  completionTokens: number;
  /** True when the caller's signal stopped the stream. */
  cancelled: boolean;
}

export interface RoundCallbacks {
  onText(delta: string): void;
  onReasoning(delta: string): void;
}

/** Reads one model response into text, reasoning and tool calls (in index order, unnamed ones dropped). */
export async function streamRound(provider: ModelProvider, request: ModelRequest, signal: AbortSignal, callbacks: RoundCallbacks): Promise<RoundResult> {
  const result: RoundResult = { text: '', reasoning: '', calls: [], promptTokens: 0, completionTokens: 0, cancelled: false };
  const calls = new Map<number, StreamedCall>();
  const iterator = provider.stream(request, signal)[Symbol.asyncIterator]();
  for (;;) {
    if (signal.aborted) {
      result.cancelled = true;
      await iterator.return?.();
      break;
    }
    const next = await iterator.next();
    if (next.done) break;
    // Nothing that arrives after the cancellation counts: the draft is what the person saw.
    if (signal.aborted) continue;
    apply(next.value, result, calls, callbacks);
  }
  result.calls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call).filter((call) => call.name !== '');
  return result;
}

function apply(event: ModelEvent, result: RoundResult, calls: Map<number, StreamedCall>, callbacks: RoundCallbacks): void {
  switch (event.type) {
    case 'text': result.text += event.delta; callbacks.onText(event.delta); return;
    case 'reasoning': result.reasoning += event.delta; callbacks.onReasoning(event.delta); return;
    case 'tool_call_start': calls.set(event.index, { id: event.id, name: event.name, arguments: '' }); return;
    case 'tool_call_delta': {
      const call = calls.get(event.index);
      if (call) call.arguments += event.argumentsDelta;
      return;
    }
    case 'tool_call_end': {
      const call = calls.get(event.index);
      if (call && event.providerData !== undefined) call.providerData = event.providerData;
      return;
    }
    case 'usage':
      result.promptTokens += event.promptTokens;
      result.completionTokens += event.completionTokens;
      return;
    case 'finish': return;
  }
}
