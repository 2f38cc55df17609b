import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { boundaries, compact, digestOf, isReusable, MAX_SUMMARY_REQUESTS, SUMMARY_NOTICE, withSummary } from '../../../core/turn/compaction.js';
import { countText, estimateRequest, inputBudget } from '../../../core/turn/compaction-tokens.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import { ModelError, type ModelEvent, type ModelMessage, type ModelProvider, type ModelRequest } from '../../../core/turn/model-provider.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';
import type { RetrySettings } from '../../../core/turn/retry-policy.js';
import { runTurn } from '../../../core/turn/turn-loop.js';
import { answer, respondingProvider, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
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
    const state = { version: 2 as const, summary: 's', coveredCount: 10, digest: '', provider: 'p' };
    const longer: ModelMessage[] = [...history, { role: 'assistant', content: 'more' }];
    expect(withSummary(longer, state).map((message) => message.content)).toEqual([expect.stringContaining('<conversation_summary>'), 'current request', 'more']);
  });

  it('reuses a summary only while what it covers is unchanged', () => {
    const state = { version: 2 as const, summary: 's', coveredCount: 5, digest: digestOf(history.slice(0, 5)), provider: 'p' };
    expect(isReusable(state, history, 'p')).toBe(true);
    expect(isReusable(state, history, 'other provider')).toBe(false);
    const edited = history.map((message, i) => (i === 2 ? { ...message, content: 'changed' } : message));
    expect(isReusable(state, edited, 'p')).toBe(false);
    const shown = withSummary(history, state);
    expect(shown[0]!.content.startsWith(SUMMARY_NOTICE)).toBe(true);
    expect(shown.slice(1)).toEqual(history.slice(5));
  });

  it('reuses a summary made while the kernel\'s warning was in the history, which the next turn\'s history does not hold', async () => {
    // The doom loop's warning is a system message of the turn only: it is not stored with the session.
    const warning: ModelMessage = { role: 'system', content: 'You called the same tool with the same arguments three times.' };
    const during = [...history.slice(0, 2), ...history.slice(2, 4), warning, ...history.slice(4)];
    const summaries: number[] = [];
    const { state } = await compact(async () => {
      summaries.push(1);
      return { received: true, accepted: true, text: 'SUMMARY', reasoning: '', calls: [], promptTokens: 1, completionTokens: 1, cancelled: false };
    }, { scope: 'p', messages: during, head: [], tools: [], previous: undefined, contextLimit: 100_000, target: 1, scale: 1 });
    expect(summaries).toHaveLength(1);
    const next = history.filter((message) => message.role !== 'system');
    expect(isReusable(state, next, 'p')).toBe(true);
    expect(isReusable(state, during, 'p')).toBe(true);
    // The summary stands where the covered messages stood, in either history.
    const end = withSummary(next, state);
    expect(end.slice(1).filter((message) => message.role !== 'system')).toEqual(next.slice(next.indexOf(next.find((message) => message.content === 'current request')!)));
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

  const isSummaryRequest = (request: ModelRequest) => request.tools.length === 0 && /<new_history_json>|<history_fragment>/.test(request.messages[1]?.content ?? '');

  it('summarises the older history without tools before a request that would not fit, reuses the summary, and never changes the stored transcript', async () => {
    const { kernel, sessionId } = await longSession();
    const before = (await kernel.sessions.read(sessionId)).entries;
    let rounds = 0;
    const provider = respondingProvider((request) => (isSummaryRequest(request) ? answer('SUMMARY: ten earlier questions about q and a.')
      : ++rounds === 1 ? toolCalls({ id: 'c1', name: 'note_get', args: { name: 'n' } }) : answer('Done.')));
    const outcome = await runTurn(turnDependencies(kernel, { requireSnapshot: false, contextLimit: 3_000 }), { sessionId, message: 'the current request', provider, systemPrompt: () => 'rules', signal: new AbortController().signal }, () => undefined);
    expect(outcome.state).toBe('finished');
    // The older history is several times this small context: summarised in pieces, once, before both rounds.
    const kinds = provider.requests.map(isSummaryRequest);
    expect(kinds.slice(-2)).toEqual([false, false]);
    expect(kinds.slice(0, -2).every(Boolean)).toBe(true);
    const main = provider.requests.at(-2)!;
    expect(main.messages[0]!.content).toBe('rules');
    expect(main.messages[1]!.content).toContain('<conversation_summary>\nSUMMARY: ten earlier questions');
    expect(main.messages.some((message) => message.content.includes('q0w0'))).toBe(false);
    expect(main.messages.some((message) => message.content === 'the current request')).toBe(true);
    expect(provider.requests.at(-1)!.messages[1]!.content).toContain('<conversation_summary>');
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

describe('compaction of a history far larger than the context', () => {
  const LIMIT = 4_000;
  /** Retries without waiting: the policy is tested in retries.test.ts. */
  const NO_WAIT: RetrySettings = { maxRetries: 1_000, baseDelayMs: 0, maxDelayMs: 0, networkDelayMs: 0 };
  const isSummary = (request: ModelRequest) => request.tools.length === 0 && /<new_history_json>|<history_fragment>/.test(request.messages[1]?.content ?? '');
  const deps = (kernel: Awaited<ReturnType<typeof boot>>, contextLimit = LIMIT) => turnDependencies(kernel, { requireSnapshot: false, contextLimit, retry: NO_WAIT });
  const go = (provider: ModelProvider, sessionId: string, events: TurnEvent[] = []) => ({ sessionId, message: 'the current request', provider, systemPrompt: () => 'rules', signal: new AbortController().signal, emit: (event: TurnEvent) => events.push(event) });

  /** Question and answer pairs until the history holds `times` the context, with one message alone twice the context. */
  async function hugeSession(times: number) {
    const kernel = await boot({ plugins: ['notes'] });
    const sessionId = newId();
    const entries: { id: string; type: string; content: string }[] = [];
    let tokens = 0;
    for (let i = 0; tokens < times * LIMIT; i++) {
      const big = i === 3 ? ` ${words(2 * LIMIT, 'big')}` : '';
      entries.push({ id: `u${i}`, type: 'user', content: `question ${i}: ${words(250, `q${i}w`)}${big}` }, { id: `a${i}`, type: 'assistant', content: `answer ${i}: ${words(250, `a${i}w`)}` });
      tokens += countText(entries.at(-2)!.content) + countText(entries.at(-1)!.content);
    }
    await kernel.sessions.save({ id: sessionId, entries });
    return { kernel, sessionId, entries };
  }

  /** A model that numbers its summaries and answers every other request with `Done.` */
  function summarizingModel() {
    let made = 0;
    const provider = respondingProvider((request) => (isSummary(request) ? answer(`SUMMARY ${++made}`) : answer('Done.')));
    return { provider, made: () => made };
  }

  it('summarises a history thirty times the context in pieces that each fit, in order, each carrying the summary so far', async () => {
    const { kernel, sessionId } = await hugeSession(30);
    const { provider, made } = summarizingModel();
    const turn = go(provider, sessionId);
    const outcome = await runTurn(deps(kernel), turn, turn.emit);
    expect(outcome.state).toBe('finished');
    const summaries = provider.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(2);
    expect(provider.requests.map(isSummary)).toEqual([...summaries.map(() => true), false]);
    for (const request of summaries) expect(estimateRequest(request.messages, request.tools)).toBeLessThanOrEqual(inputBudget(LIMIT, request.maxOutputTokens));
    const main = provider.requests.at(-1)!;
    expect(estimateRequest(main.messages, main.tools)).toBeLessThanOrEqual(inputBudget(LIMIT, undefined));
    summaries.forEach((request, i) => {
      const source = request.messages[1]!.content;
      expect(source).toContain('<history_fragment>');
      if (i === 0) expect(source).not.toContain('<previous_summary>');
      else expect(source).toContain(`<previous_summary>\nSUMMARY ${i}\n</previous_summary>`);
    });
    // Pieces follow the history: each question first appears no earlier than the one before it, and the
    // message twice the context is cut across pieces.
    const piece = (marker: string) => summaries.findIndex((request) => request.messages[1]!.content.includes(marker));
    const order = Array.from({ length: 20 }, (_, i) => piece(`question ${i}:`));
    expect(order[0]).toBe(0);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(piece(`big${2 * LIMIT - 1}`)).toBeGreaterThan(piece('big0 '));
    // The summary goes to the model as its own system message right after the rules (REFERENCE.md §6).
    expect(main.messages[0]).toEqual({ role: 'system', content: 'rules' });
    expect(main.messages[1]!.role).toBe('system');
    expect(main.messages[1]!.content.startsWith(SUMMARY_NOTICE)).toBe(true);
    expect(main.messages[1]!.content).toContain(`<conversation_summary>\nSUMMARY ${made()}\n</conversation_summary>`);
  });

  it('reuses the summary in the next turn, and summarises again once what it covers was edited', async () => {
    const { kernel, sessionId, entries } = await hugeSession(6);
    const first = summarizingModel();
    const turn = go(first.provider, sessionId);
    await runTurn(deps(kernel), turn, turn.emit);
    expect(first.provider.requests.filter(isSummary).length).toBeGreaterThan(0);
    const second = summarizingModel();
    const next = go(second.provider, sessionId);
    expect((await runTurn(deps(kernel), next, next.emit)).state).toBe('finished');
    expect(second.provider.requests.filter(isSummary)).toHaveLength(0);
    expect(second.provider.requests[0]!.messages[1]!.content).toContain(`SUMMARY ${first.made()}`);
    const stored = await kernel.sessions.readStored(sessionId);
    const edited = stored.entries.map((entry) => (entry.id === entries[0]!.id ? { ...entry, content: 'question 0: something else entirely' } : entry));
    await kernel.sessions.save({ id: sessionId, entries: edited, expectedRevision: stored.revision });
    const third = summarizingModel();
    const after = go(third.provider, sessionId);
    await runTurn(deps(kernel), after, after.emit);
    expect(third.provider.requests.filter(isSummary).length).toBeGreaterThan(0);
    expect(third.provider.requests[0]!.messages[1]!.content).toContain('something else entirely');
  });

  it.each(['authentication', 'invalid_request'] as const)('ends the turn with a %s error of a summary request, and never sends the whole history instead', async (category) => {
    const { kernel, sessionId } = await hugeSession(3);
    const provider = respondingProvider((request) => {
      if (isSummary(request)) throw new ModelError(category, 'refused');
      return answer('answered from the whole history');
    });
    const events: TurnEvent[] = [];
    const turn = go(provider, sessionId, events);
    expect((await runTurn(deps(kernel), turn, turn.emit)).state).toBe('interrupted');
    expect(events.find((event) => event.type === 'error')).toMatchObject({ code: `MODEL_${category.toUpperCase()}` });
    expect(provider.requests.map(isSummary)).toEqual([true]);
  });

  it('counts every summary request, retries included, against the per-turn cap, and then sends nothing that does not fit', async () => {
    const { kernel, sessionId } = await hugeSession(3);
    const provider = respondingProvider((request) => {
      if (isSummary(request)) throw new ModelError('server', 'overloaded');
      return answer('answered from the whole history');
    });
    const events: TurnEvent[] = [];
    const turn = go(provider, sessionId, events);
    expect((await runTurn(deps(kernel), turn, turn.emit)).state).toBe('interrupted');
    expect(events.find((event) => event.type === 'error')).toMatchObject({ code: 'COMPACTION_FAILED' });
    expect(provider.requests.filter(isSummary)).toHaveLength(MAX_SUMMARY_REQUESTS);
    expect(provider.requests.every(isSummary)).toBe(true);
  });

  it('keeps what a compaction stopped by the per-turn cap had summarised, and the next turn goes on from there', async () => {
    const { kernel, sessionId } = await hugeSession(60);
    const first = summarizingModel();
    const events: TurnEvent[] = [];
    const turn = go(first.provider, sessionId, events);
    expect((await runTurn(deps(kernel), turn, turn.emit)).state).toBe('interrupted');
    expect(first.made()).toBe(MAX_SUMMARY_REQUESTS);
    const error = events.find((event) => event.type === 'error');
    expect(error).toMatchObject({ code: 'COMPACTION_FAILED' });
    expect(error && 'message' in error ? error.message : '').toMatch(/the summary of the first \d+ messages is kept/);
    const second = summarizingModel();
    const next = go(second.provider, sessionId);
    expect((await runTurn(deps(kernel), next, next.emit)).state).toBe('finished');
    const summaries = second.provider.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.length).toBeLessThan(MAX_SUMMARY_REQUESTS);
    // It starts from the kept summary, not from the first question.
    expect(summaries[0]!.messages[1]!.content).toContain(`<previous_summary>\nSUMMARY ${MAX_SUMMARY_REQUESTS}\n</previous_summary>`);
    expect(summaries[0]!.messages[1]!.content).not.toContain('question 0:');
    expect(second.provider.requests.at(-1)!.messages[1]!.content).toContain(`SUMMARY ${second.made()}`);
  });

  it('sends the history as it is when a summary ahead of the limit fails for a passing reason and the request still fits', async () => {
    const { kernel, sessionId } = await hugeSession(1);
    // The size of this turn's first request, measured with room to spare, then a context it just fits.
    const probe = summarizingModel();
    const probeSession = newId();
    await kernel.sessions.save({ id: probeSession, entries: (await kernel.sessions.readStored(sessionId)).entries });
    const measured = go(probe.provider, probeSession);
    await runTurn(deps(kernel, 1_000_000), measured, measured.emit);
    const size = estimateRequest(probe.provider.requests[0]!.messages, probe.provider.requests[0]!.tools);
    let limit = size;
    while (inputBudget(limit, undefined) < size) limit++;
    expect(size).toBeGreaterThan(0.9 * inputBudget(limit, undefined));
    const provider = respondingProvider((request) => {
      if (isSummary(request)) throw new ModelError('server', 'overloaded');
      return answer('answered from the whole history');
    });
    const turn = go(provider, sessionId);
    expect((await runTurn(deps(kernel, limit), turn, turn.emit)).state).toBe('finished');
    expect(provider.requests.at(-1)!.messages.some((message) => message.content.includes('question 0:'))).toBe(true);
  });
});

