import type { Confirmation } from '../../../core/client/api-schema.js';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe } from '../api.js';
import { readEvents } from './sse.js';

export interface LiveCall { id: string; name: string; arguments: string; output?: string; ok?: boolean; progress?: string }
/** A turn as it streams: what the chat shows until the stored session replaces it. */
/** `stopped`: the turn ended interrupted (a Stop here or elsewhere, a time limit) without an error of its own. */
export interface Live { turnID?: string; reasoning: string; content: string; calls: LiveCall[]; state: 'running' | 'ended'; error?: string; usage?: string; stopped?: boolean }

export interface TurnListener {
  /** A fresh copy of the live state after each event. */
  update(live: Live): void;
  confirm(confirmation: Confirmation): void;
  question(): void;
}

/**
 * Sends the person's message and follows the turn's server-sent events to its end; a failure to start
 * or a broken stream ends it with the error said, never thrown.
 */
export async function runTurn(client: QuireClient, sessionId: string, message: string, listener: TurnListener): Promise<Live> {
  const state: Live = { reasoning: '', content: '', calls: [], state: 'running' };
  const update = (): void => listener.update({ ...state, calls: state.calls.map((call) => ({ ...call })) });
  update();
  try {
    const response = await client.request('startTurn', { params: { id: sessionId }, body: { message } });
    if (!response.ok) {
      const body = await response.json().catch(() => ({})) as { error?: { message?: string; code?: string } };
      throw new Error(`${body.error?.message ?? `HTTP ${response.status}`} (${body.error?.code ?? response.status})`);
    }
    await readEvents(response, (type, data) => {
      apply(state, type, data as Record<string, unknown>, listener);
      update();
    });
  } catch (e) {
    state.error = describe(e);
  }
  state.state = 'ended';
  return state;
}

function apply(state: Live, type: string, event: Record<string, unknown>, listener: TurnListener): void {
  const call = (): LiveCall | undefined => state.calls.find((entry) => entry.id === event.toolCallID);
  switch (type) {
    case 'turn': state.turnID = String(event.turnID); break;
    case 'reasoning': state.reasoning += String(event.delta); break;
    case 'content': state.content += String(event.delta); break;
    case 'tool_call': state.calls.push({ id: String(event.toolCallID), name: String(event.name), arguments: String(event.arguments) }); break;
    case 'tool_result': {
      const found = call();
      if (found) { found.output = String(event.output); found.ok = event.ok === true; }
      break;
    }
    case 'progress': {
      const found = call();
      const progress = event.progress as { done?: number; total?: number; message?: string };
      if (found) found.progress = `${progress.done ?? ''}${progress.total ? ` of ${progress.total}` : ''} ${progress.message ?? ''}`;
      break;
    }
    case 'confirm': listener.confirm(event.confirmation as Confirmation); break;
    case 'question': listener.question(); break;
    case 'usage': state.usage = `${String(event.promptTokens)} in, ${String(event.completionTokens)} out${typeof event.cost === 'number' ? `, $${event.cost.toFixed(4)}` : ''}`; break;
    case 'error': state.error = `${String(event.message)} (${String(event.code)})`; break;
    case 'done':
      state.state = 'ended';
      // Stopped (a Stop here, in another tab or the chat; a time limit) with no error of its own: said,
      // or the answer so far read as a finished one.
      if (event.state === 'interrupted' && state.error === undefined) state.stopped = true;
      break;
  }
}
