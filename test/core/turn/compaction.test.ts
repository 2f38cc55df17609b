import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { boundaries, digestOf, isReusable, SUMMARY_NOTICE, withSummary } from '../../../core/turn/compaction.js';
import { inputBudget } from '../../../core/turn/compaction-tokens.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import { ModelError, type ModelEvent, type ModelMessage, type ModelProvider, type ModelRequest } from '../../../core/turn/model-provider.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';
import { runTurn } from '../../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();
const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');

describe('where the history may be cut', () => {
  const history: ModelMessage[] = [
    { role: 'user', content: 'q1' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'x', arguments: '{}' }, { id: 'b', name: 'y', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'a', content: 'ra' },
    { role: 'tool', toolCallId: 'b', content: 'rb' },
    { role: 'assistant', content: 'answer 1' },
    { role: 'user', content: 'q2' },
    { role: 'assistant', content: 'answer 2' },
    { role: 'user', content: 'current request' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'z', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c', content: 'rc' },
  ];

  it('never separates a tool call from its results, and always keeps the current request', () => {
    expect(boundaries(history)).toEqual([4, 5, 7]);
  });

  it('cuts inside the current turn after complete tool rounds, unless the current turn carries signed state', () => {
    const longer: ModelMessage[] = [...history, { role: 'assistant', content: '', toolCalls: [{ id: 'd', name: 'w', arguments: '{}' }] }, { role: 'tool', toolCallId: 'd', content: 'rd' }];
    expect(boundaries(longer)).toEqual([4, 5, 7, 10]);
    const signedNow = longer.map((message, i) => (i === 8 ? { ...message, providerData: { signature: 'sig' } } : message));
    expect(boundaries(signedNow)).toEqual([4, 5, 7]);
    // Signed state of an earlier turn may be summarised (the summary source leaves signatures out).
    const signedBefore = longer.map((message, i) => (i === 4 ? { ...message, providerData: 'x' } : message));
    expect(boundaries(signedBefore)).toEqual([4, 5, 7, 10]);
  });

  it('keeps the current request in view when a cut passes it', () => {
    const state = { summary: 's', coveredCount: 10, digest: '', provider: 'p' };
    const longer: ModelMessage[] = [...history, { role: 'assistant', content: 'more' }];
    expect(withSummary(longer, state).map((message) => message.content)).toEqual([expect.stringContaining('<conversation_summary>'), 'current request', 'more']);
  });

  it('reuses a summary only while what it covers is unchanged', () => {
    const state = { summary: 's', coveredCount: 5, digest: digestOf(history.slice(0, 5)), provider: 'p' };
    expect(isReusable(state, history, 'p')).toBe(true);
    expect(isReusable(state, history, 'other provider')).toBe(false);
    const edited = history.map((message, i) => (i === 2 ? { ...message, content: 'changed' } : message));
    expect(isReusable(state, edited, 'p')).toBe(false);
    const shown = withSummary(history, state);
    expect(shown[0]!.content.startsWith(SUMMARY_NOTICE)).toBe(true);
    expect(shown.slice(1)).toEqual(history.slice(5));
  });

  it('leaves room for the answer and a safety margin', () => {
    expect(inputBudget(3000, undefined)).toBe(3000 - 512 - 256);
    expect(inputBudget(200_000, 8000)).toBe(200_000 - 8000 - 2000);
  });
});

describe('compaction in a turn', () => {
  async function longSession() {
    const kernel = await boot({ plugins: ['notes'] });
    const sessionId = newId();
    const entries = Array.from({ length: 10 }, (_, i) => [
      { id: `u${i}`, type: 'user', content: words(150, `q${i}w`) },
      { id: `a${i}`, type: 'assistant', content: words(150, `a${i}w`) },
    ]).flat();
    await kernel.sessions.save({ id: sessionId, entries });
    return { kernel, sessionId };
  }

  const isSummaryRequest = (request: ModelRequest) => request.tools.length === 0 && request.messages[1]?.content.includes('<new_history_json>') === true;

  it('summarises the older history without tools before a request that would not fit, reuses the summary, and never changes the stored transcript', async () => {
    const { kernel, sessionId } = await longSession();
    const before = (await kernel.sessions.read(sessionId)).entries;
    const provider = scriptedProvider([answer('SUMMARY: ten earlier questions about q and a.'), toolCalls({ id: 'c1', name: 'note_get', args: { name: 'n' } }), answer('Done.')]);
    const outcome = await runTurn(turnDependencies(kernel, { requireSnapshot: false, contextLimit: 3_000 }), { sessionId, message: 'the current request', provider, systemPrompt: () => 'rules', signal: new AbortController().signal }, () => undefined);
    expect(outcome.state).toBe('finished');
    expect(provider.requests.map(isSummaryRequest)).toEqual([true, false, false]);
    const main = provider.requests[1]!;
    expect(main.messages[0]!.content).toBe('rules');
    expect(main.messages[1]!.content).toContain('<conversation_summary>\nSUMMARY: ten earlier questions');
    expect(main.messages.some((message) => message.content.includes('q0w0'))).toBe(false);
    expect(main.messages.some((message) => message.content === 'the current request')).toBe(true);
    expect(provider.requests[2]!.messages[1]!.content).toContain('<conversation_summary>');
    const after = (await kernel.sessions.read(sessionId)).entries;
    expect(after.slice(0, before.length)).toEqual(before);
  });

  it('compacts once after a context-overflow error and tries again', async () => {
    const { kernel, sessionId } = await longSession();
    let main = 0;
    const requests: ModelRequest[] = [];
    const provider: ModelProvider = {
      id: 'overflowing',
      async *stream(request): AsyncGenerator<ModelEvent> {
        requests.push(request);
        if (isSummaryRequest(request)) { yield* answer('SUMMARY'); return; }
        main++;
        if (main === 1) throw new ModelError('context_overflow', 'maximum context length exceeded');
        yield* answer('fits now');
      },
    };
    const events: TurnEvent[] = [];
    const outcome = await runTurn(turnDependencies(kernel, { requireSnapshot: false, contextLimit: 100_000 }), { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => events.push(event));
    expect(outcome.state).toBe('finished');
    expect(requests.map(isSummaryRequest)).toEqual([false, true, false]);
  });

  it('stops with a clear error when the context overflows and its size is unknown', async () => {
    const { kernel, sessionId } = await longSession();
    const provider: ModelProvider = { id: 'p', async *stream(): AsyncGenerator<ModelEvent> { throw new ModelError('context_overflow', 'too many tokens'); } };
    const events: TurnEvent[] = [];
    const outcome = await runTurn(turnDependencies(kernel, { requireSnapshot: false }), { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => events.push(event));
    expect(outcome.state).toBe('interrupted');
    expect(events.find((event) => event.type === 'error')).toMatchObject({ code: 'COMPACTION_FAILED' });
  });

  it('corrects its estimates by the provider\'s own token counts', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [{ id: 'u0', type: 'user', content: words(60, 'x') }, { id: 'a0', type: 'assistant', content: words(60, 'y') }] });
    const counted = (events: ModelEvent[]): ModelEvent[] => events.map((event) => (event.type === 'usage' ? { ...event, promptTokens: 2_000 } : event));
    const provider = scriptedProvider([[...toolCalls({ id: 'c1', name: 'note_get', args: { name: 'n' } }).slice(0, -1), { type: 'usage', promptTokens: 2_000, completionTokens: 1 }, { type: 'finish', reason: 'tool_calls' }], answer('SUMMARY'), counted(answer('done'))]);
    await runTurn(turnDependencies(kernel, { requireSnapshot: false, contextLimit: 3_000 }), { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
    expect(provider.requests.map(isSummaryRequest)).toEqual([false, true, false]);
  });
});
