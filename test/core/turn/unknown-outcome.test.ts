import { describe, expect, it, vi } from 'vitest';
import { KernelError } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';
import { runTurn } from '../../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { caught, useHarness, type UserPlugin } from '../../helpers/harness.js';

const { boot } = useHarness();

/** A handler that never ends and never looks at its signal. */
const stalling: UserPlugin = {
  manifest: {
    id: 'stall', version: '0.1.0', kernel: '^0.1.0', description: 'stalls', entry: 'main.js',
    tools: [{ name: 'stall', description: 'stalls', actions: { forever: { description: 'never ends', input: { type: 'object' }, effects: [] } } }],
  },
  entry: 'main.js',
  code: 'export default { activate() { return { stall: { forever: () => new Promise(() => undefined) } }; } };',
};

async function run(kernel: Awaited<ReturnType<typeof boot>>, rounds: Parameters<typeof scriptedProvider>[0]) {
  const sessionId = newId();
  await kernel.sessions.save({ id: sessionId, entries: [] });
  await kernel.sessions.setPermissionMode(sessionId, 'auto');
  const provider = scriptedProvider(rounds);
  const events: TurnEvent[] = [];
  const outcome = await runTurn(turnDependencies(kernel, { requireSnapshot: false }), { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => events.push(event));
  return { outcome, events, provider, session: await kernel.sessions.read(sessionId) };
}

describe('a call whose outcome the turn cannot know', () => {
  it('stops the turn at a call that passed its time limit still running: recorded unknown, never repeated', async () => {
    const kernel = await boot({ userPlugins: { stall: stalling }, config: { plugins: { stall: { trusted: true } }, actions: { timeoutMs: 100 } } });
    const { outcome, events, provider, session } = await run(kernel, [
      toolCalls({ id: 'c1', name: 'stall_forever', args: {} }, { id: 'c2', name: 'stall_forever', args: {} }),
      answer('asked again'),
    ]);
    expect(outcome.state).toBe('interrupted');
    // The model is not asked again (it tried the call once more, a second copy running beside the first).
    expect(provider.requests).toHaveLength(1);
    const calls = session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as { state: string }[];
    expect(calls.map((call) => call.state)).toEqual(['unknown', 'skipped']);
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', code: 'OUTCOME_UNKNOWN' }));
  });

  it('counts a call that ran but whose audit line failed as done, and says not to repeat it', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    kernel.audit.append = () => Promise.reject(new KernelError('DISK_FULL', 'no space left', { details: { what: 'audit log' } }));
    const { outcome, provider, session } = await run(kernel, [toolCalls({ id: 'c1', name: 'note_put', args: { name: 'a', text: 'x' } }), answer('saved')]);
    expect(outcome.state).toBe('finished');
    const calls = session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as unknown as { ok: boolean; result: string }[];
    expect(calls[0]).toMatchObject({ ok: true, result: expect.stringContaining('do not repeat it') });
    expect(provider.requests).toHaveLength(2);
  });
});

describe('the calls of one answer', () => {
  it('stops at the fifth identical failure, not at the end of the batch', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    const same = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, name: 'note_get', args: { name: 'missing' } }));
    const { outcome, events, provider, session } = await run(kernel, [toolCalls(...same), answer('never asked')]);
    expect(outcome.state).toBe('interrupted');
    expect(provider.requests).toHaveLength(1);
    const calls = session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as unknown as { state: string }[];
    expect(calls.map((call) => call.state)).toEqual([...Array(5).fill('finished'), ...Array(5).fill('skipped')]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', code: 'DOOM_LOOP' }));
  });

  it('runs at most 64 calls of one answer, answering the rest "not run", and goes on', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    const many = Array.from({ length: 70 }, (_, i) => ({ id: `c${i}`, name: 'note_put', args: { name: `n${i}`, text: 'x' } }));
    const { outcome, provider, session } = await run(kernel, [toolCalls(...many), answer('done')]);
    expect(outcome.state).toBe('finished');
    expect(provider.requests).toHaveLength(2);
    const calls = session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as unknown as { state: string; result: string }[];
    expect(calls.filter((call) => call.state === 'finished')).toHaveLength(64);
    expect(calls.slice(64).map((call) => call.state)).toEqual(Array(6).fill('skipped'));
    expect(calls[69]!.result).toContain('TOO_MANY_CALLS');
    const admin = { kind: 'person' as const, name: 'alice', role: 'admin' as const };
    expect(await kernel.pipeline.call({ target: 'note_get', input: { name: 'n63' }, principal: admin })).toMatchObject({ status: 'ok' });
    expect((await caught(kernel.pipeline.call({ target: 'note_get', input: { name: 'n64' }, principal: admin }))).code).toBe('NOT_FOUND');
  });
});

describe('how a turn says it ended', () => {
  it('keeps a kernel error\'s code, says a turn whose commit failed did not finish, and sends no done for a turn that never began', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    const full = vi.spyOn(kernel.sessions, 'saveTurn').mockImplementation(() => Promise.reject(new KernelError('DISK_FULL', 'no space left on the device')));
    const first = await run(kernel, [answer('never')]);
    expect(first.events).toContainEqual(expect.objectContaining({ type: 'error', code: 'DISK_FULL' }));
    full.mockRestore();

    const save = kernel.sessions.save.bind(kernel.sessions);
    const failing = vi.spyOn(kernel.sessions, 'save').mockImplementation(async (input: unknown) => {
      if ((input as { commitTurnID?: string }).commitTurnID !== undefined) throw new Error('the commit failed');
      return save(input);
    });
    const second = await run(kernel, [answer('an answer not saved')]);
    failing.mockRestore();
    expect(second.outcome.state).toBe('interrupted');
    expect(second.events.at(-1)).toMatchObject({ type: 'done', state: 'interrupted' });
    expect(second.events).toContainEqual(expect.objectContaining({ type: 'error', code: 'COMMIT_FAILED' }));

    // Its end not written (a full disk between its last save and its end): not finished either.
    const unfinalized = vi.spyOn(kernel.sessions, 'finalizeTurn').mockImplementation(() => Promise.reject(new KernelError('DISK_FULL', 'no space left on the device')));
    const ended: TurnEvent[] = [];
    const third = newId();
    await kernel.sessions.save({ id: third, entries: [] });
    // Said as an error before `done`, which stays the last event (the route added an error after it).
    expect(await runTurn(turnDependencies(kernel, { requireSnapshot: false }), { sessionId: third, message: 'go', provider: scriptedProvider([answer('an answer')]), systemPrompt: () => '', signal: new AbortController().signal }, (event) => ended.push(event))).toMatchObject({ state: 'interrupted' });
    unfinalized.mockRestore();
    expect(ended.slice(-2)).toMatchObject([{ type: 'error', code: 'DISK_FULL' }, { type: 'done', state: 'interrupted' }]);

    const refused = vi.spyOn(kernel.sessions, 'beginTurn').mockImplementation(() => Promise.reject(new KernelError('DISK_FULL', 'no space left on the device')));
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    const events: TurnEvent[] = [];
    await expect(runTurn(turnDependencies(kernel, { requireSnapshot: false }), { sessionId, message: 'go', provider: scriptedProvider([answer('never')]), systemPrompt: () => '', signal: new AbortController().signal }, (event) => events.push(event))).rejects.toMatchObject({ code: 'DISK_FULL' });
    refused.mockRestore();
    expect(events.map((event) => event.type)).not.toContain('done');
  });
});

describe('an answer cut at the output limit', () => {
  it('is kept but not taken for a whole answer, and a call cut off mid-arguments is told why', async () => {
    const kernel = await boot({ plugins: ['notes'] });
    const cut = await run(kernel, [[{ type: 'text', delta: 'The three reasons are: first, the' }, { type: 'finish', reason: 'length' }]]);
    expect(cut.outcome.state).toBe('interrupted');
    expect(cut.events).toContainEqual(expect.objectContaining({ type: 'error', code: 'OUTPUT_LIMIT' }));
    expect(cut.session.entries.at(-1)).toMatchObject({ type: 'assistant', content: 'The three reasons are: first, the' });

    const cutCall = await run(kernel, [
      [{ type: 'tool_call_start', index: 0, id: 'c1', name: 'note_put' }, { type: 'tool_call_delta', index: 0, argumentsDelta: '{"name":"long","text":"a very long no' }, { type: 'tool_call_end', index: 0 }, { type: 'finish', reason: 'length' }],
      answer('I will write it in parts.'),
    ]);
    const calls = cutCall.session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as unknown as { result: string }[];
    expect(calls[0]!.result).toContain('OUTPUT_LIMIT');
    expect(cutCall.outcome.state).toBe('finished');

    // Cut right after its name: no arguments at all is not "no arguments" then (it would have run with none).
    const cutEarly = await run(kernel, [
      [{ type: 'tool_call_start', index: 0, id: 'c1', name: 'note_get' }, { type: 'tool_call_end', index: 0 }, { type: 'finish', reason: 'length' }],
      answer('Again, shorter.'),
    ]);
    const early = cutEarly.session.entries.find((entry) => entry.type === 'assistant')!.toolCalls as unknown as { result: string }[];
    expect(early[0]!.result).toContain('OUTPUT_LIMIT');
  });
});
