import { linkedController } from './linked-signal.js';
import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest } from './model-provider.js';

export interface StreamedCall {
  id: string;
  name: string;
  arguments: string;
  providerData?: unknown;
}

export interface RoundResult {
  /** The request failed; what arrived before is kept in the other fields. */
  error?: unknown;
  /** Something reached the person (text) or the loop (a tool call) before the end or the error. */
  received: boolean;
  /** The provider sent anything at all (a keepalive when the server took the request): it was working on it. */
  accepted: boolean;
  text: string;
  reasoning: string;
  calls: StreamedCall[];
  promptTokens: number;
  completionTokens: number;
  /** True when the caller's signal stopped the stream. */
  cancelled: boolean;
  finishReason?: string;
  /** The provider's own record of the response (signed reasoning, output items), replayed next request. */
  providerData?: unknown;
  /** Whose notes the model had been shown for this response (set by the turn loop, egress-filter.ts). */
  notebooks?: readonly string[] | 'all';
}

export interface RoundCallbacks {
  onText(delta: string): void;
  onReasoning(delta: string): void;
}

/**
 * Reads one model response into text, reasoning and tool calls (in index order, unnamed ones dropped).
 * A stream silent for `idleTimeoutMs` is stopped as a timeout, also when the provider ignores its signal.
 * Errors are returned with what arrived before them, never thrown.
 */
export async function streamRound(provider: ModelProvider, request: ModelRequest, signal: AbortSignal, callbacks: RoundCallbacks, idleTimeoutMs: number): Promise<RoundResult> {
  const result: RoundResult = { received: false, accepted: false, text: '', reasoning: '', calls: [], promptTokens: 0, completionTokens: 0, cancelled: false };
  if (provider.beforeRequest) {
    try {
      await provider.beforeRequest(request, signal);
    } catch (error) {
      result.cancelled = signal.aborted;
      // A Stop while the budget question was open is a Stop, not BUDGET_EXCEEDED (as on the stream's path).
      if (!result.cancelled) result.error = error;
      return result;
    }
  }
  const calls = new Map<number, StreamedCall>();
  const linked = linkedController(signal);
  const idle = idleWatchdog(idleTimeoutMs, (error) => linked.abort(error));
  const cancel = cancellation(signal);
  try {
    const iterator = provider.stream(request, linked.signal)[Symbol.asyncIterator]();
    for (;;) {
      if (signal.aborted) {
        void iterator.return?.();
        break;
      }
      const next = await Promise.race([iterator.next(), idle.error, cancel.done]);
      if (next.done) break;
      // Nothing that arrives after the cancellation counts: the draft is what the person saw.
      if (signal.aborted) continue;
      idle.arm();
      result.accepted = true;
      apply(next.value, result, calls, callbacks);
    }
  } catch (error) {
    if (!signal.aborted) result.error = error;
  } finally {
    idle.stop();
    linked.unlink();
    cancel.stop();
  }
  // A provider that honours the signal simply ends its stream: that is a cancellation, not an answer.
  if (signal.aborted) result.cancelled = true;
  result.calls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call).filter((call) => call.name !== '');
  return result;
}

/** Rejects `error` when `ms` pass without `arm()`; armed from the start. Its abort is an error, not a cancellation. */
function idleWatchdog(ms: number, onIdle: (error: ModelError) => void): { error: Promise<never>; arm(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let fire: (error: ModelError) => void = () => undefined;
  const error = new Promise<never>((_, reject) => { fire = reject; });
  error.catch(() => undefined);
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const stalled = new ModelError('timeout', `the model sent nothing for ${ms} ms`);
      onIdle(stalled);
      fire(stalled);
    }, ms);
  };
  arm();
  return { error, arm, stop: () => clearTimeout(timer) };
}

/** Settles when the caller cancels, even if the provider does not honour its signal; `stop` removes the listener. */
function cancellation(signal: AbortSignal): { done: Promise<IteratorResult<ModelEvent>>; stop(): void } {
  let onCancel: () => void = () => undefined;
  const done = new Promise<IteratorResult<ModelEvent>>((resolve) => {
    onCancel = () => resolve({ done: true, value: undefined });
    if (signal.aborted) onCancel();
    else signal.addEventListener('abort', onCancel, { once: true });
  });
  return { done, stop: () => signal.removeEventListener('abort', onCancel) };
}

function apply(event: ModelEvent, result: RoundResult, calls: Map<number, StreamedCall>, callbacks: RoundCallbacks): void {
  switch (event.type) {
    case 'text': result.text += event.delta; result.received = true; callbacks.onText(event.delta); return;
    case 'reasoning': result.reasoning += event.delta; result.received = true; callbacks.onReasoning(event.delta); return;
    case 'tool_call_start': calls.set(event.index, { id: event.id, name: event.name, arguments: '' }); result.received = true; return;
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
    case 'keepalive': return;
    case 'finish':
      result.finishReason = event.reason;
      if (event.providerData !== undefined) result.providerData = event.providerData;
      return;
  }
}
