import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import { ModelError, type ModelEvent, type ModelProvider } from '../../../core/turn/model-provider.js';
import { DEFAULT_RETRY, retryDelay } from '../../../core/turn/retry-policy.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';
import { runTurn } from '../../../core/turn/turn-loop.js';
import { answer } from '../../fakes/scripted-provider.js';
import { useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();
const FAST = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 40, networkDelayMs: 5 };

/** A provider whose n-th request runs the n-th behaviour: events to yield, an error to throw, or a stall. */
function flaky(behaviours: ((signal: AbortSignal) => AsyncGenerator<ModelEvent>)[]): ModelProvider & { calls: number } {
  const provider = {
    id: 'flaky',
    calls: 0,
    stream(_request: unknown, signal: AbortSignal) {
      const behaviour = behaviours[provider.calls++];
      if (!behaviour) throw new Error('no more behaviours');
      return behaviour(signal);
    },
  };
  return provider;
}

async function* fail(error: Error): AsyncGenerator<ModelEvent> { throw error; }
async function* events(list: ModelEvent[]): AsyncGenerator<ModelEvent> { yield* list; }
async function* textThenFail(): AsyncGenerator<ModelEvent> { yield { type: 'text', delta: 'partial ' }; throw new ModelError('server', 'stream broke'); }
async function* stall(signal: AbortSignal, before: ModelEvent[] = []): AsyncGenerator<ModelEvent> {
  yield* before;
  // Never answers again; ignores its signal on purpose (the watchdog must not rely on it).
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  void signal;
}

async function run(provider: ModelProvider, idleTimeoutMs = 2_000) {
  const kernel = await boot({ plugins: ['notes'] });
  const sessionId = newId();
  await kernel.sessions.save({ id: sessionId, entries: [] });
  const deps = turnDependencies(kernel, { requireSnapshot: false, retry: FAST, idleTimeoutMs });
  const seen: TurnEvent[] = [];
  const outcome = await runTurn(deps, { sessionId, message: 'hi', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => seen.push(event));
  return { outcome, seen, session: await kernel.sessions.read(sessionId) };
}

describe('retries and the idle watchdog', () => {
  it('retries a rate limit and a server error before anything arrived, then answers', async () => {
    const provider = flaky([() => fail(new ModelError('rate_limit', '429', 10)), () => fail(new ModelError('server', '503')), () => events(answer('at last'))]);
    const { outcome, seen } = await run(provider);
    expect(outcome.state).toBe('finished');
    expect(seen.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && [event.attempt, event.category])).toEqual([[1, 'rate_limit'], [2, 'server']]);
  });

  it('never retries an authentication error or an invalid request', async () => {
    const { outcome, seen } = await run(flaky([() => fail(new ModelError('authentication', 'bad key'))]));
    expect(outcome.state).toBe('interrupted');
    expect(seen.find((event) => event.type === 'error')).toMatchObject({ code: 'MODEL_AUTHENTICATION' });
    expect(seen.some((event) => event.type === 'retry')).toBe(false);
  });

  it('does not repeat a request once reasoning has been shown', async () => {
    async function* reasoningThenFail(): AsyncGenerator<ModelEvent> { yield { type: 'reasoning', delta: 'let me think' }; throw new ModelError('server', 'broke'); }
    const provider = flaky([() => reasoningThenFail(), () => events(answer('again'))]);
    const { outcome } = await run(provider);
    expect([outcome.state, provider.calls]).toEqual(['interrupted', 1]);
  });

  it('does not repeat a request once text has arrived: the partial answer stays as a draft', async () => {
    const provider = flaky([() => textThenFail(), () => events(answer('should not be asked'))]);
    const { outcome, session } = await run(provider);
    expect([outcome.state, provider.calls]).toEqual(['interrupted', 1]);
    expect(session.entries.at(-1)).toMatchObject({ type: 'assistant', content: 'partial ' });
  });

  it('stops a stream that stalls, retries it when nothing had arrived, and interrupts when something had', async () => {
    const retried = flaky([(signal) => stall(signal), () => events(answer('recovered'))]);
    expect((await run(retried, 100)).outcome.state).toBe('finished');
    const stuck = flaky([(signal) => stall(signal, [{ type: 'text', delta: 'half' }])]);
    const { outcome, seen } = await run(stuck, 100);
    expect(outcome.state).toBe('interrupted');
    expect(seen.find((event) => event.type === 'error')).toMatchObject({ code: 'MODEL_TIMEOUT' });
  });

  it('repeats a request that fell silent after the server took it once only (a model thinking unseen is billed for it each time)', async () => {
    const thinking = flaky([(signal) => stall(signal, [{ type: 'keepalive' }]), (signal) => stall(signal, [{ type: 'keepalive' }]), () => events(answer('never asked'))]);
    const { outcome, seen } = await run(thinking, 100);
    expect(thinking.calls).toBe(2);
    expect(outcome.state).toBe('interrupted');
    expect(seen.find((event) => event.type === 'error')).toMatchObject({ code: 'MODEL_TIMEOUT', message: expect.stringContaining('agent.idleTimeoutMs') });
    expect(seen.filter((event) => event.type === 'retry')).toHaveLength(1);
    // Counted apart from other failures: a server error first does not use up the one more try.
    const after503 = flaky([() => fail(new ModelError('server', '503')), (signal) => stall(signal, [{ type: 'keepalive' }]), (signal) => stall(signal, [{ type: 'keepalive' }]), () => events(answer('never asked'))]);
    await run(after503, 100);
    expect(after503.calls).toBe(3);
  });
});

describe('the retry delay', () => {
  it('doubles from the base with jitter within ±20%, is capped, and honours retry-after up to the cap', () => {
    const settings = { ...DEFAULT_RETRY };
    expect(retryDelay(new ModelError('server', 'x'), 1, settings, () => 0)).toBe(800);
    expect(retryDelay(new ModelError('server', 'x'), 3, settings, () => 1)).toBe(4_800);
    expect(retryDelay(new ModelError('server', 'x'), 5, { ...settings, maxDelayMs: 10_000 }, () => 1)).toBe(10_000);
    expect(retryDelay(new ModelError('rate_limit', 'x', 30_000), 1, settings, () => 0.5)).toBe(30_000);
    expect(retryDelay(new ModelError('rate_limit', 'x', 500_000), 1, settings, () => 0.5)).toBe(64_000);
    expect(retryDelay(new ModelError('network', 'x'), 2, settings)).toBe(3_000);
    expect(retryDelay(new ModelError('server', 'x'), 6, settings)).toBeUndefined();
    expect(retryDelay(new ModelError('context_overflow', 'x'), 1, settings)).toBeUndefined();
    expect(retryDelay(new Error('plain'), 1, settings)).toBeUndefined();
  });
});
