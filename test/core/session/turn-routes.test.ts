import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import type { Kernel } from '../../../core/kernel.js';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelEvent, ModelProvider } from '../../../core/turn/model-provider.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { useHarness } from '../../helpers/harness.js';
import { readEvents } from '../../helpers/sse-events.js';
import { RESULT_UNKNOWN } from '../../../core/session/session-types.js';
import { fixtureEvents } from '../../fixtures/native/plugins/fixture-events.js';
import { stampFile } from '../../fixtures/native/plugins/blocker/index.js';
import { blockerLatch, resetBlockerLatch } from '../../fixtures/native/plugins/blocker/latch.js';

const ADMIN = 'qk_turns-admin';
const config: KernelConfigFile = { agent: { requireSnapshot: false }, auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] } };
const request = (method: string, body?: unknown) => ({ method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

async function withModel(kernel: Kernel, provider: ModelProvider) {
  kernel.container.registerInstance(MODEL_PROVIDER, provider);
  const app = createHttpApp(kernel);
  const created = (await (await app.request('/api/agent/sessions', request('POST', { title: 'Chat' }))).json()) as { session: { id: string } };
  return { app, id: created.session.id };
}

describe('agent turns over HTTP', () => {
  const harness = useHarness();
  afterEach(() => resetBlockerLatch());

  it('streams a turn as SSE, pausing at a confirmation the person answers over HTTP', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const { app, id } = await withModel(kernel, scriptedProvider([toolCalls({ id: 'c1', name: 'note_put', args: { name: 'n', text: 't' } }), answer('Saved.')]));
    kernel.container.registerInstance(Symbol.for('quire:agent.snapshots'), { snapshot: async () => ({ id: 'snap-1' }) });
    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note' }));
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(response, async ({ event, data }) => {
      if (event !== 'confirm') return;
      const pending = (await (await app.request(`/api/agent/sessions/${id}/pending`, request('GET'))).json()) as { confirmations: { id: string }[] };
      const confirmation = data.confirmation as { id: string; argsHash: string };
      expect(pending.confirmations.map((item) => item.id)).toEqual([confirmation.id]);
      const other = (await (await app.request('/api/agent/sessions', request('POST', {}))).json()) as { session: { id: string } };
      const elsewhere = await app.request(`/api/agent/sessions/${other.session.id}/confirmations/${confirmation.id}/answer`, request('POST', { approved: true, argsHash: confirmation.argsHash }));
      expect(elsewhere.status).toBe(404);
      const answered = await app.request(`/api/agent/sessions/${id}/confirmations/${confirmation.id}/answer`, request('POST', { approved: true, argsHash: confirmation.argsHash }));
      expect(answered.status).toBe(200);
    });
    expect(events.map((event) => event.event)).toEqual(['turn', 'thinking', 'tool_call', 'confirm', 'snapshot', 'tool_result', 'thinking', 'content', 'usage', 'done']);
    const session = (await (await app.request(`/api/agent/sessions/${id}`, request('GET'))).json()) as { session: { entries: { type: string }[] } };
    expect(session.session.entries.map((entry) => entry.type)).toEqual(['user', 'assistant', 'assistant', 'snapshot']);
  });

  it('answers 503 without a model, 409 for a second turn at once, and cancels a running turn', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const bare = createHttpApp(kernel);
    const created = (await (await bare.request('/api/agent/sessions', request('POST', {}))).json()) as { session: { id: string } };
    const missing = await bare.request(`/api/agent/sessions/${created.session.id}/turns`, request('POST', { message: 'hi' }));
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([503, 'MODEL_UNAVAILABLE']);
    let release: () => void = () => undefined;
    const slow: ModelProvider = {
      id: 'slow',
      async *stream(_request, signal): AsyncGenerator<ModelEvent> {
        yield { type: 'text', delta: 'thinking about it' };
        await new Promise<void>((resolve) => { release = resolve; signal.addEventListener('abort', () => resolve(), { once: true }); });
      },
    };
    const { app, id } = await withModel(kernel, slow);
    const first = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'think' }));
    let turnID = '';
    const events = readEvents(first, async ({ event, data }) => {
      if (event === 'turn') turnID = String(data.turnID);
      if (event !== 'content') return;
      const second = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'again' }));
      expect(second.status).toBe(409);
      expect((await app.request(`/api/agent/sessions/${id}`, request('DELETE'))).status).toBe(409);
      // A client naming another turn (its own, which never began) stops nothing: this one may be another client's.
      expect(await (await app.request(`/api/agent/sessions/${id}/turns/cancel?turn=20260101000000-someother`, request('POST', {}))).json()).toEqual({ cancelled: false, reason: 'another_turn', turnID });
      expect(((await (await app.request(`/api/agent/sessions/${id}/turns/cancel?turn=${turnID}`, request('POST', {}))).json()) as { cancelled: boolean }).cancelled).toBe(true);
    });
    const seen = await events;
    release();
    expect(seen.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
  });

  it('refuses a message sent again with the same id (a retry after the connection dropped) instead of running it twice', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const { app, id } = await withModel(kernel, scriptedProvider([toolCalls({ id: 'c1', name: 'note_put', args: { name: 'n', text: 't' } }), answer('Saved.'), answer('Saved again.')]));
    await kernel.sessions.setPermissionMode(id, 'auto');
    kernel.container.registerInstance(Symbol.for('quire:agent.snapshots'), { snapshot: async () => ({ id: 'snap-1' }) });
    const first = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note', messageId: 'm-1' }));
    expect((await readEvents(first)).at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    const again = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note', messageId: 'm-1' }));
    const body = (await again.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect([again.status, body.error.code, body.error.details.reason, body.error.details.messageId, body.error.details.answered]).toEqual([409, 'CONFLICT', 'duplicate', 'm-1', true]);
    expect(body.error.message).toContain('its answer is in the session');
    const session = (await (await app.request(`/api/agent/sessions/${id}`, request('GET'))).json()) as { session: { entries: { type: string; messageId?: string }[] } };
    expect(session.session.entries.filter((entry) => entry.type === 'user').map((entry) => entry.messageId)).toEqual(['m-1']);
    // The session is free: another id (or none) is a new turn; a malformed id is refused naming the field.
    const other = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note', messageId: 'm-2' }));
    expect((await readEvents(other)).at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    const malformed = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'x', messageId: 'has spaces' }));
    expect(malformed.status).toBe(400);
    const unknown = await app.request('/api/agent/sessions/20200101000000-abcdefg/turns', request('POST', { message: 'x', messageId: 'm-3' }));
    expect(unknown.status).toBe(404);
  });

  it('says of a message sent again whose turn ended without an answer (the model failed) that it has none', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const failing: ModelProvider = {
      id: 'failing',
      async *stream(): AsyncGenerator<ModelEvent> {
        throw new Error('the model is overloaded');
      },
    };
    const { app, id } = await withModel(kernel, failing);
    const first = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note', messageId: 'm-lost' }));
    expect((await readEvents(first)).at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    const again = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'save a note', messageId: 'm-lost' }));
    const body = (await again.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect([again.status, body.error.details.reason, body.error.details.answered]).toEqual([409, 'duplicate', false]);
    expect(body.error.message).toContain('it ended without an answer');
  });

  it('reads a session from an index on for a client following a turn: from the turn on at the same revision, whole at another', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    let release: () => void = () => undefined;
    let round = 0;
    const model: ModelProvider = {
      id: 'following',
      async *stream(_request, signal): AsyncGenerator<ModelEvent> {
        if (++round === 1) return yield* answer('the first answer');
        yield { type: 'text', delta: 'thinking about it' };
        await new Promise<void>((resolve) => { release = resolve; signal.addEventListener('abort', () => resolve(), { once: true }); });
      },
    };
    const { app, id } = await withModel(kernel, model);
    await readEvents(await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'first' })));
    type Read = { session: { entries: { id: string; type: string }[]; revision: number; recoveryFrom?: number }; entriesFrom?: number; entryCount?: number };
    const read = async (query = ''): Promise<Read> => (await (await app.request(`/api/agent/sessions/${id}${query}`, request('GET'))).json()) as Read;
    const before = await read();
    expect([before.session.entries.length, before.session.recoveryFrom, before.entriesFrom]).toEqual([2, undefined, undefined]);
    // Nothing running: from the copy's end at its revision, nothing more.
    expect(await read(`?entriesFrom=2&revision=${before.session.revision}`)).toMatchObject({ entriesFrom: 2, entryCount: 2, session: { entries: [] } });

    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'second' }));
    let during = -1;
    const checks = readEvents(response, async ({ event }) => {
      if (event !== 'content') return;
      const whole = await read();
      expect(whole.session.recoveryFrom).toBe(2);
      during = whole.session.revision;
      // A copy held during the turn: from the turn's user entry on (the turn's own entries change), and
      // the copy's first entries with them make the whole; asked from further on, it still starts there.
      for (const from of [2, whole.session.entries.length]) {
        const part = await read(`?entriesFrom=${from}&revision=${whole.session.revision}`);
        expect([part.entriesFrom, part.entryCount, part.session.entries[0]?.type]).toEqual([2, whole.session.entries.length, 'user']);
        expect([...whole.session.entries.slice(0, part.entriesFrom), ...part.session.entries]).toEqual(whole.session.entries);
      }
      // The copy from before the turn is at another revision (the turn saved its message): the whole.
      expect(await read(`?entriesFrom=2&revision=${before.session.revision}`)).toMatchObject({ entriesFrom: 0, session: { entries: whole.session.entries } });
      for (const [query, field] of [['?entriesFrom=-1&revision=1', 'entriesFrom'], ['?entriesFrom=2', 'revision'], ['?revision=x', 'revision']] as const) {
        const refused = await app.request(`/api/agent/sessions/${id}${query}`, request('GET'));
        expect([refused.status, ((await refused.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([400, field]);
      }
      release();
    });
    await checks;
    // Committed since: a copy from during the turn is at an older revision, and gets the whole.
    const after = await read(`?entriesFrom=2&revision=${during}`);
    expect([after.entriesFrom, after.session.entries.map((entry) => entry.type)]).toEqual([0, ['user', 'assistant', 'user', 'assistant']]);
  });

  it('reads only the last entries of a session, from the message that began their turn, with the task list as it stands', async () => {
    // Opening a long session read all of it (tens of MB) to show its newest messages, and so did the page after each turn.
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const { app, id } = await withModel(kernel, scriptedProvider([]));
    const turn = (n: number) => [
      { id: `u${n}`, type: 'user', content: `question ${n}` },
      { id: `a${n}`, type: 'assistant', content: '', toolCalls: [{ id: `c${n}`, name: 'todo_write', arguments: JSON.stringify({ todos: [{ content: `task ${n}`, status: 'pending' }] }) }] },
      { id: `t${n}`, type: 'tool', toolCallId: `c${n}`, content: 'ok' },
      { id: `f${n}`, type: 'assistant', content: `answer ${n}` },
    ];
    const saved = await kernel.sessions.save({ id, entries: [...turn(0), ...turn(1), ...turn(2)], expectedRevision: 1 });
    await kernel.sessions.writeTodos(id, [{ content: 'task 2', status: 'in_progress' }]);
    type Read = { session: { entries: { id: string }[]; revision: number }; entriesFrom?: number; entryCount?: number; todos?: unknown[] };
    const read = async (query: string): Promise<Read> => (await (await app.request(`/api/agent/sessions/${id}${query}`, request('GET'))).json()) as Read;
    // The last 2 entries are the middle of turn 2: from its question on.
    const last = await read('?tail=2');
    expect([last.entriesFrom, last.entryCount, last.session.entries.map((entry) => entry.id), last.todos]).toEqual([8, 12, ['u2', 'a2', 't2', 'f2'], [{ content: 'task 2', status: 'in_progress' }]]);
    expect((await read('?tail=5')).session.entries[0]!.id).toBe('u1');
    // More than there are: the whole, without a task list (the entries hold it).
    expect(await read('?tail=50')).toMatchObject({ entriesFrom: 0, entryCount: 12 });
    expect((await read('?tail=50')).todos).toBeUndefined();
    // A copy at another revision, with a tail: the tail, not the whole; at the same revision, what follows the copy.
    expect((await read(`?entriesFrom=4&revision=${saved.revision - 1}&tail=2`)).entriesFrom).toBe(8);
    expect(await read(`?entriesFrom=12&revision=${saved.revision}&tail=2`)).toMatchObject({ entriesFrom: 12, session: { entries: [] } });
    for (const query of ['?tail=0', '?tail=-1', '?tail=x']) {
      const refused = await app.request(`/api/agent/sessions/${id}${query}`, request('GET'));
      expect([refused.status, ((await refused.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([400, 'tail']);
    }
  });

  it('closing the kernel stops a running turn and waits for it to save how it ended, before the session store closes', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const slow: ModelProvider = {
      id: 'slow',
      async *stream(_request, signal): AsyncGenerator<ModelEvent> {
        yield { type: 'text', delta: 'thinking about it' };
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    };
    const { app, id } = await withModel(kernel, slow);
    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'think' }));
    let closed: Promise<void> | undefined;
    const seen = await readEvents(response, async ({ event }) => {
      if (event === 'content') closed ??= kernel.close();
    });
    await closed;
    expect(seen.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    const turnID = seen.find((event) => event.event === 'turn')!.data.turnID;
    // Saved before the store closed: the next kernel over the workspace has the turn, its draft kept.
    const again = await harness.boot({ plugins: ['notes'], config, workspace: kernel.workspace.root });
    const session = await again.sessions.read(id);
    expect(session.entries.map((entry) => [entry.type, 'content' in entry ? entry.content : undefined])).toEqual([['user', 'think'], ['assistant', 'thinking about it']]);
    expect(session.lastCommittedTurnID).toBe(turnID);
  });

  it('asks the person a question and goes on with the answer, accepted once and only if it fits', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const provider = scriptedProvider([
      toolCalls({ id: 'q1', name: 'question', args: { questions: [{ question: 'Which colour?', options: [{ label: 'red' }, { label: 'blue' }] }] } }),
      answer('Blue it is.'),
    ]);
    const { app, id } = await withModel(kernel, provider);
    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'pick a colour' }));
    await readEvents(response, async ({ event, data }) => {
      if (event !== 'question') return;
      const questionID = String(data.questionID);
      const pending = (await (await app.request(`/api/agent/sessions/${id}/pending`, request('GET'))).json()) as { questions: { id: string }[] };
      expect(pending.questions.map((question) => question.id)).toEqual([questionID]);
      // An answer that does not fit is bad input, naming where; a second answer is a conflict, not an unknown question.
      const notAnOption = await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['green']] }));
      expect([notAnOption.status, ((await notAnOption.json()) as { error: { code: string; details: { issues: { pointer: string }[] } } }).error]).toMatchObject([400, { code: 'INVALID_INPUT', details: { field: 'answers', issues: [{ pointer: '/answers/0/0' }] } }]);
      const count = await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['red'], ['blue']] }));
      expect(count.status).toBe(400);
      expect((await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['blue']] }))).status).toBe(200);
      const again = await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['red']] }));
      expect([again.status, ((await again.json()) as { error: { code: string } }).error.code]).toEqual([409, 'CONFLICT']);
      expect((await app.request(`/api/agent/sessions/${id}/questions/nope/answer`, request('POST', { answers: [['red']] }))).status).toBe(404);
    });
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toContain('Which colour?\nblue');
  });

  it('stops a turn asked to stop while its model is still being checked, and sends the model nothing', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    let streamed = false;
    const slowCheck: ModelProvider = {
      id: 'slow-check',
      // The first model check waits (a slow server) until the turn is stopped.
      prepare: (signal) => new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
      async *stream() { streamed = true; yield* answer('never'); },
    };
    const { id } = await withModel(kernel, slowCheck);
    const started = kernel.turns.start(id, 'hello', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kernel.turns.cancelTurn(id).cancelled).toBe(true);
    await expect(started).rejects.toMatchObject({ code: 'ACTION_CANCELLED' });
    expect(streamed).toBe(false);
    expect(kernel.turns.isRunning(id)).toBe(false);
  });

  it('stops a turn started over HTTP and asked to stop while its model is still being checked, before any stream opens', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    let streamed = false;
    let checking!: () => void;
    const checkStarted = new Promise<void>((resolve) => { checking = resolve; });
    const slowCheck: ModelProvider = {
      id: 'slow-check',
      prepare: (signal) => new Promise<void>((_resolve, reject) => {
        checking();
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
      async *stream() { streamed = true; yield* answer('never'); },
    };
    const { app, id } = await withModel(kernel, slowCheck);
    const started = app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'hello' }));
    await checkStarted;
    const cancel = await app.request(`/api/agent/sessions/${id}/turns/cancel`, request('POST', {}));
    expect(await cancel.json()).toMatchObject({ cancelled: true });
    const response = await started;
    expect(response.headers.get('content-type')).not.toContain('text/event-stream');
    expect(await response.json()).toMatchObject({ error: { code: 'ACTION_CANCELLED' } });
    expect(streamed).toBe(false);
    expect(kernel.turns.isRunning(id)).toBe(false);
  });

  it('lets a turn prepared and never run go when the kernel closes, instead of waiting out its grace', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const { id } = await withModel(kernel, scriptedProvider([answer('never asked')]));
    const prepared = await kernel.turns.prepare(id);
    expect(kernel.turns.isRunning(id)).toBe(true);
    // A grace longer than the test's limit: close returns only because the prepared turn let go.
    await kernel.turns.close(120_000);
    expect(kernel.turns.isRunning(id)).toBe(false);
    await expect(prepared.run('hello', () => undefined)).rejects.toMatchObject({ code: 'ACTION_CANCELLED' });
  });

  it("answers the model INVALID_INPUT for a question whose options are not a list of labels, and asks the person nothing", async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const provider = scriptedProvider([
      toolCalls({ id: 'q1', name: 'question', args: { questions: [{ question: 'Which colour?', options: 'red/blue' }] } }),
      answer('I will ask plainly.'),
    ]);
    const { app, id } = await withModel(kernel, provider);
    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'pick a colour' }));
    const events = await readEvents(response, async () => undefined);
    expect(events.some((event) => event.event === 'question')).toBe(false);
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toMatch(/INVALID_INPUT.*\/questions\/0\/options/s);
  });

  it('does not say a rollback holding the session was cancelled: it is not stopped by a cancel', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const { app, id } = await withModel(kernel, scriptedProvider([answer('hi')]));
    let finish: () => void = () => undefined;
    const held = kernel.turns.exclusive(id, () => new Promise<void>((resolve) => { finish = resolve; }));
    expect(await (await app.request(`/api/agent/sessions/${id}/turns/cancel`, request('POST', {}))).json()).toEqual({ cancelled: false, reason: 'rollback' });
    finish();
    await held;
    const bad = await app.request(`/api/agent/sessions/${id}/turns/cancel?turn=`, request('POST', {}));
    expect([bad.status, ((await bad.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([400, 'turn']);
  });

  it('cancels a tool call while it runs: its signal aborts, it is stored result-unknown, and no model round follows', async () => {
    const kernel = await harness.boot({ plugins: ['blocker'], config });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'job_wait', args: {} }, { id: 'c2', name: 'job_wait', args: {} }), answer('never asked')]);
    const { app, id } = await withModel(kernel, provider);
    const response = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'run the long job' }));
    let cancelAnswer: unknown;
    const events = await readEvents(response, async ({ event, data }) => {
      if (event !== 'tool_call' || data.toolCallID !== 'c1') return;
      await blockerLatch().started;
      cancelAnswer = await (await app.request(`/api/agent/sessions/${id}/turns/cancel`, request('POST', {}))).json();
    });
    expect(cancelAnswer).toEqual({ cancelled: true, turnID: events[0]!.data.turnID, running: { toolCalls: [{ id: 'c1', name: 'job_wait' }] } });
    expect(fixtureEvents()).toContain('blocker:aborted');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(events.some((event) => event.event === 'error')).toBe(false);
    expect(provider.requests).toHaveLength(1);
    const session = (await (await app.request(`/api/agent/sessions/${id}`, request('GET'))).json()) as { session: { entries: { toolCalls?: { id: string; state: string; result: string }[] }[] } };
    const calls = session.session.entries.flatMap((entry) => entry.toolCalls ?? []);
    expect(calls.map((call) => [call.id, call.state])).toEqual([['c1', 'unknown'], ['c2', 'skipped']]);
    expect(calls[0]!.result).toBe(RESULT_UNKNOWN);
    expect(await (await app.request(`/api/agent/sessions/${id}/turns/cancel`, request('POST', {}))).json()).toEqual({ cancelled: false });
  });

  /** A turn that asks to confirm job_stamp; `meanwhile` runs before the person approves it over HTTP. */
  async function approveAfter(meanwhile: (kernel: Kernel, app: ReturnType<typeof createHttpApp>) => Promise<void>) {
    const kernel = await harness.boot({ plugins: ['blocker'], config });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'job_stamp', args: { name: 'approved' } }), answer('Understood.')]);
    const { app, id } = await withModel(kernel, provider);
    let confirmationId = '';
    const events = await readEvents(await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'stamp it' })), async ({ event, data }) => {
      if (event !== 'confirm') return;
      const confirmation = data.confirmation as { id: string; argsHash: string };
      confirmationId = confirmation.id;
      await meanwhile(kernel, app);
      expect((await app.request(`/api/agent/sessions/${id}/confirmations/${confirmation.id}/answer`, request('POST', { approved: true, argsHash: confirmation.argsHash }))).status).toBe(200);
    });
    const result = events.find((event) => event.event === 'tool_result')!;
    const confirmation = (await (await app.request(`/api/confirmations/${confirmationId}`, request('GET'))).json()) as { confirmation: { status: string } };
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === 'tool')!.content;
    const code = (JSON.parse(toolMessage.replace(/^\[tool_output\]\n|\n\[\/tool_output\]$/g, '')) as { error?: { code: string } }).error?.code;
    return { result, code, status: confirmation.confirmation.status, stamped: existsSync(stampFile(kernel.workspace.dataDir, 'approved')), last: events.at(-1) };
  }

  it('does not run an approved call whose plugin was disabled while the confirmation waited', async () => {
    const outcome = await approveAfter(async (_kernel, app) => {
      expect((await app.request('/api/plugins/blocker', request('PUT', { enabled: false }))).status).toBe(200);
    });
    expect(outcome.result.data.ok).toBe(false);
    expect(outcome.code).toBe('ACTION_NOT_FOUND');
    expect(outcome.stamped).toBe(false);
    expect(outcome.status).toBe('expired');
    expect(outcome.last).toMatchObject({ event: 'done', data: { state: 'finished' } });
  });

  it('does not run an approved call whose action changed its definition while the confirmation waited', async () => {
    const outcome = await approveAfter(async (kernel) => {
      const changed = kernel.registry.list().filter((entry) => entry.pluginId === 'blocker')
        .map((entry) => (entry.action === 'stamp' ? { ...entry, spec: { ...entry.spec, description: 'Writes a stamp file somewhere else' } } : entry));
      kernel.registry.replacePlugin('blocker', changed);
    });
    expect(outcome.code).toBe('ACTION_CHANGED');
    expect(outcome.stamped).toBe(false);
    expect(outcome.status).toBe('expired');
  });
});
