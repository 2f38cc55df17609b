import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import type { Kernel } from '../../../core/kernel.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import type { ModelEvent } from '../../../core/turn/model-provider.js';
import type { SnapshotService } from '../../../core/turn/snapshot-service.js';
import type { TurnEvent } from '../../../core/turn/turn-events.js';
import { runTurn, type TurnDependencies } from '../../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { caught, useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();

async function setup(settings: Partial<TurnDependencies['settings']> = {}, snapshots?: SnapshotService) {
  const kernel = await boot({ plugins: ['notes'] });
  const sessionId = newId();
  await kernel.sessions.save({ id: sessionId, title: 'T', entries: [] });
  const deps = turnDependencies(kernel, { requireSnapshot: false, ...settings });
  if (snapshots) deps.snapshots = () => snapshots;
  return { kernel, sessionId, deps };
}

/** Runs a turn; the person approves (or rejects) every confirmation as soon as it is asked. */
async function turn(kernel: Kernel, deps: TurnDependencies, sessionId: string, rounds: ModelEvent[][], options: { approve?: boolean; signal?: AbortSignal } = {}) {
  const provider = scriptedProvider(rounds);
  const events: TurnEvent[] = [];
  const outcome = await runTurn(deps, { sessionId, message: 'please help', provider, systemPrompt: () => 'You are a test.', signal: options.signal ?? new AbortController().signal }, (event) => {
    events.push(event);
    if (event.type === 'confirm') {
      void kernel.confirmations.answer(event.confirmation.id, { approved: options.approve ?? true, argsHash: event.confirmation.argsHash, answeredBy: 'person:test' });
    }
  });
  return { outcome, events, provider, session: await kernel.sessions.read(sessionId) };
}

describe('the turn loop', () => {
  it('answers without tools and commits the turn to the session', async () => {
    const { kernel, sessionId, deps } = await setup();
    const { outcome, events, session } = await turn(kernel, deps, sessionId, [answer('Hello there.')]);
    expect(outcome.state).toBe('finished');
    expect(events.map((event) => event.type)).toEqual(['turn', 'thinking', 'content', 'usage', 'done']);
    expect(session.entries.map((entry) => [entry.type, entry.content])).toEqual([['user', 'please help'], ['assistant', 'Hello there.']]);
    expect(session.lastCommittedTurnID).toBe(outcome.turnID);
    expect(session.recoveryTurnID).toBeUndefined();
  });

  it('counts text holding a tokenizer special token as plain text instead of failing the turn', async () => {
    // A context limit makes the turn count the request's tokens before sending it.
    const { kernel, sessionId, deps } = await setup({ contextLimit: 3_000 });
    const provider = scriptedProvider([answer('It reads <|endoftext|> literally.')]);
    const outcome = await runTurn(deps, { sessionId, message: 'what does <|endoftext|> mean in <|fim_prefix|> notes?', provider, systemPrompt: () => 'You are a test.', signal: new AbortController().signal }, () => undefined);
    expect(outcome.state).toBe('finished');
    const session = await kernel.sessions.read(sessionId);
    expect(session.entries.map((entry) => entry.content)).toEqual(['what does <|endoftext|> mean in <|fim_prefix|> notes?', 'It reads <|endoftext|> literally.']);
  });

  it('runs a batch in order through the gate: a read runs, a write waits for the person, results go back wrapped', async () => {
    const { kernel, sessionId, deps } = await setup();
    const { outcome, events, provider, session } = await turn(kernel, deps, sessionId, [
      toolCalls({ id: 'c1', name: 'note_get', args: { name: 'missing' } }, { id: 'c2', name: 'note_put', args: { name: 'plan', text: 'step one' } }),
      answer('Saved the plan.'),
    ]);
    expect(outcome.state).toBe('finished');
    const order = events.filter((event) => event.type === 'tool_call' || event.type === 'confirm' || event.type === 'tool_result').map((event) => event.type === 'tool_call' ? `call:${event.name}` : event.type === 'tool_result' ? `result:${event.toolCallID}:${event.ok}` : 'confirm');
    expect(order).toEqual(['call:note_get', 'result:c1:false', 'call:note_put', 'confirm', 'result:c2:true']);
    const second = provider.requests[1]!.messages.filter((message) => message.role === 'tool');
    expect(second.map((message) => message.content.startsWith('[tool_output]\n'))).toEqual([true, true]);
    expect(second[0]!.content).toContain('NOT_FOUND');
    const calls = session.entries.flatMap((entry) => entry.toolCalls ?? []);
    expect(calls.map((call) => [call.id, call.state])).toEqual([['c1', 'finished'], ['c2', 'finished']]);
  });

  it('runs a call approved with "always" as approved: its confirmation is consumed and the audit names it, though the grant made would let it through', async () => {
    const { kernel, sessionId, deps } = await setup();
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'note_put', args: { name: 'plan', text: 'step one' } }), answer('Saved.')]);
    let asked: string | undefined;
    const outcome = await runTurn(deps, { sessionId, message: 'save it', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => {
      if (event.type !== 'confirm') return;
      asked = event.confirmation.id;
      void kernel.confirmations.answer(event.confirmation.id, { approved: true, always: true, argsHash: event.confirmation.argsHash, answeredBy: 'person:test' });
    });
    expect(outcome.state).toBe('finished');
    expect(kernel.grants.list()).toHaveLength(1);
    expect(kernel.confirmations.get(asked!)?.status).toBe('consumed');
  });

  it('refuses arguments nested past the body limit with a clear error, runs nothing, and goes on', async () => {
    const { kernel, sessionId, deps } = await setup();
    let deep: unknown = 'bottom';
    for (let i = 0; i < 3_000; i++) deep = { more: deep };
    const { outcome, events, provider } = await turn(kernel, deps, sessionId, [toolCalls({ id: 'c1', name: 'note_put', args: { name: 'deep', text: deep } }), answer('Understood.')]);
    expect(outcome.state).toBe('finished');
    const told = provider.requests[1]!.messages.find((message) => message.role === 'tool')!.content;
    expect(told).toContain('INVALID_INPUT');
    expect(told).toContain('nest deeper than 100 levels (at /text/more/more');
    // Refused before the gate: the person is not asked about a call that cannot run.
    expect(events.some((event) => event.type === 'confirm')).toBe(false);
    expect(events.filter((event) => event.type === 'tool_result').map((event) => event.type === 'tool_result' && event.ok)).toEqual([false]);
  });

  it('skips a call the person declines and goes on', async () => {
    const { kernel, sessionId, deps } = await setup();
    const { outcome, provider } = await turn(kernel, deps, sessionId, [toolCalls({ id: 'c1', name: 'note_put', args: { name: 'x', text: 'y' } }), answer('Understood.')], { approve: false });
    expect(outcome.state).toBe('finished');
    expect(provider.requests[1]!.messages.find((message) => message.role === 'tool')!.content).toContain('declined');
  });

  it('takes one snapshot before the first write of the turn and records it', async () => {
    const taken: string[] = [];
    const { kernel, sessionId, deps } = await setup({ requireSnapshot: true }, { snapshot: async ({ memo }) => { taken.push(memo); return { id: `snap-${taken.length}` }; } });
    const { events, session } = await turn(kernel, deps, sessionId, [
      toolCalls({ id: 'c1', name: 'note_put', args: { name: 'a', text: '1' } }, { id: 'c2', name: 'note_put', args: { name: 'b', text: '2' } }),
      answer('Done.'),
    ]);
    // One before the first write; one more at the end, kept only for rolling the turn back.
    expect(taken).toEqual(['agent auto snapshot', 'agent turn end']);
    expect(events.filter((event) => event.type === 'snapshot')).toEqual([expect.objectContaining({ type: 'snapshot', snapshotID: 'snap-1' })]);
    expect(session.entries.filter((entry) => entry.type === 'snapshot').map((entry) => entry.snapshotID)).toEqual(['snap-1']);
  });

  it('skips the write and the rest of the batch when no snapshot can be taken, and the write never runs', async () => {
    const { kernel, sessionId, deps } = await setup({ requireSnapshot: true });
    const { outcome, events, session } = await turn(kernel, deps, sessionId, [
      toolCalls({ id: 'c1', name: 'note_put', args: { name: 'never', text: 'x' } }, { id: 'c2', name: 'note_get', args: { name: 'never' } }),
    ]);
    expect(outcome.state).toBe('interrupted');
    expect(events.at(-2)).toMatchObject({ type: 'error', code: 'SNAPSHOT_FAILED' });
    const calls = session.entries.flatMap((entry) => entry.toolCalls ?? []);
    expect(calls.map((call) => call.state)).toEqual(['skipped', 'skipped']);
    expect(existsSync(`${kernel.workspace.dataDir}/fixture-notes/never.txt`)).toBe(false);
  });

  it('warns the model after three identical failures and stops the turn at five', async () => {
    const { kernel, sessionId, deps } = await setup();
    const failing = (i: number) => toolCalls({ id: `c${i}`, name: 'note_get', args: { name: 'missing' } });
    const { outcome, events, provider } = await turn(kernel, deps, sessionId, [failing(1), failing(2), failing(3), failing(4), failing(5), answer('unreached')]);
    expect(outcome.state).toBe('interrupted');
    expect(events.find((event) => event.type === 'error')).toMatchObject({ code: 'DOOM_LOOP' });
    expect(provider.requests).toHaveLength(5);
    expect(provider.requests[3]!.messages.some((message) => message.role === 'system' && message.content.includes("'note_get' 3 times"))).toBe(true);
    expect(provider.requests[2]!.messages.some((message) => message.role === 'system' && message.content.includes('times'))).toBe(false);
  });

  it('gives the model no tools once the round bound is reached, and never runs a call made after it', async () => {
    const { kernel, sessionId, deps } = await setup({ maxToolRounds: 2 });
    const read = (i: number) => toolCalls({ id: `r${i}`, name: 'note_get', args: { name: `n${i}` } });
    const { provider } = await turn(kernel, deps, sessionId, [read(1), read(2), answer('final')]);
    expect(provider.requests.map((request) => request.tools.length > 0)).toEqual([true, true, false]);
    const late = await setup({ maxToolRounds: 1 });
    const { outcome, events } = await turn(late.kernel, late.deps, late.sessionId, [read(1), toolCalls({ id: 'w', name: 'note_put', args: { name: 'after-bound', text: 'x' } })]);
    expect(outcome.state).toBe('interrupted');
    expect(events.find((event) => event.type === 'error')).toMatchObject({ code: 'ROUND_LIMIT' });
    expect(existsSync(`${late.kernel.workspace.dataDir}/fixture-notes/after-bound.txt`)).toBe(false);
  });

  it('expires a confirmation nobody answered in time: the call does not run and a late answer is refused', async () => {
    const { kernel, sessionId, deps } = await setup({ confirmTimeoutMs: 50 });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'note_put', args: { name: 'late', text: 'x' } }), answer('ok')]);
    let asked: { id: string; argsHash: string } | undefined;
    await runTurn(deps, { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => { if (event.type === 'confirm') asked = event.confirmation; });
    expect(kernel.confirmations.get(asked!.id)?.status).toBe('expired');
    expect((await caught(kernel.confirmations.answer(asked!.id, { approved: true, argsHash: asked!.argsHash, answeredBy: 'person:late' }))).code).toBe('CONFIRMATION_ALREADY_ANSWERED');
    expect(existsSync(`${kernel.workspace.dataDir}/fixture-notes/late.txt`)).toBe(false);
    expect(provider.requests[1]!.messages.find((message) => message.role === 'tool')!.content).toContain('did not answer in time');
  });

  it('stops the next write when the person switches the session back to confirm during the turn', async () => {
    const { kernel, sessionId, deps } = await setup();
    await kernel.sessions.setPermissionMode(sessionId, 'auto');
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'note_put', args: { name: 'a', text: '1' } }), toolCalls({ id: 'c2', name: 'note_put', args: { name: 'b', text: '2' } }), answer('done')]);
    const confirms: string[] = [];
    await runTurn(deps, { sessionId, message: 'go', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => {
      if (event.type === 'tool_result' && event.toolCallID === 'c1') void kernel.sessions.setPermissionMode(sessionId, 'confirm');
      if (event.type === 'confirm') {
        confirms.push(event.confirmation.wireName);
        void kernel.confirmations.answer(event.confirmation.id, { approved: false, argsHash: event.confirmation.argsHash, answeredBy: 'person:test' });
      }
    });
    expect(confirms).toEqual(['note_put']);
    expect(existsSync(`${kernel.workspace.dataDir}/fixture-notes/a.txt`)).toBe(true);
    expect(existsSync(`${kernel.workspace.dataDir}/fixture-notes/b.txt`)).toBe(false);
  });

  it('leaves the turn interrupted with its draft when cancelled mid-answer', async () => {
    const { kernel, sessionId, deps } = await setup();
    const controller = new AbortController();
    const events: TurnEvent[] = [];
    const provider = {
      id: 'slow',
      async *stream() {
        yield { type: 'text', delta: 'Half of ' } as ModelEvent;
        controller.abort();
        yield { type: 'text', delta: 'never seen' } as ModelEvent;
      },
    };
    const outcome = await runTurn(deps, { sessionId, message: 'go', provider, systemPrompt: () => '', signal: controller.signal }, (event) => events.push(event));
    expect(outcome.state).toBe('interrupted');
    const session = await kernel.sessions.read(sessionId);
    expect(session.entries.at(-1)).toMatchObject({ type: 'assistant', content: 'Half of ' });
    expect(events.at(-1)).toMatchObject({ type: 'done', state: 'interrupted' });
  });

  it("leaves no listener behind on the turn's signal, however many rounds it runs", async () => {
    const { kernel, sessionId, deps } = await setup({ maxToolRounds: 40 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => { warnings.push(warning.name); };
    process.on('warning', onWarning);
    try {
      const reads = Array.from({ length: 15 }, (_, i) => toolCalls({ id: `r${i}`, name: 'note_get', args: { name: `n${i}` } }));
      const { outcome } = await turn(kernel, deps, sessionId, [...reads, answer('done')]);
      expect(outcome.state).toBe('finished');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('commits a finished turn left uncommitted before the next one, keeping earlier snapshot entries', async () => {
    const { kernel, sessionId, deps } = await setup();
    const saved = await kernel.sessions.save({ id: sessionId, entries: [{ id: 'u0', type: 'user', content: 'first' }, { id: 'runtime_snapshot_S1', type: 'snapshot', snapshotID: 'S1' }], expectedRevision: 1 });
    const left = await kernel.sessions.beginTurn(sessionId, { turnID: 't-left', userEntryID: 'u0', baseRevision: saved.revision });
    await kernel.sessions.saveTurn(sessionId, { ...left, snapshotIDs: ['S2'], delta: [{ id: 'x', type: 'assistant', content: 'left answer' }] });
    await kernel.sessions.finalizeTurn(sessionId, 't-left', 'finished');
    const { outcome } = await turn(kernel, deps, sessionId, [answer('new answer')]);
    expect(outcome.state).toBe('finished');
    const stored = await kernel.sessions.readStored(sessionId);
    expect(stored.entries.filter((entry) => entry.type === 'snapshot').map((entry) => entry.snapshotID)).toEqual(['S1', 'S2']);
    expect(stored.entries.filter((entry) => entry.type === 'assistant').map((entry) => entry.content)).toEqual(['left answer', 'new answer']);
  });
});
