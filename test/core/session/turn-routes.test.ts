import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import type { Kernel } from '../../../core/kernel.js';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelEvent, ModelProvider } from '../../../core/turn/model-provider.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { useHarness } from '../../helpers/harness.js';
import { readEvents } from '../../helpers/sse-events.js';

const ADMIN = 'qk_turns-admin';
const config: KernelConfigFile = { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] } };
const request = (method: string, body?: unknown) => ({ method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

async function withModel(kernel: Kernel, provider: ModelProvider) {
  kernel.container.registerInstance(MODEL_PROVIDER, provider);
  const app = createHttpApp(kernel);
  const created = (await (await app.request('/api/agent/sessions', request('POST', { title: 'Chat' }))).json()) as { session: { id: string } };
  return { app, id: created.session.id };
}

describe('agent turns over HTTP', () => {
  const harness = useHarness();

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
    const events = readEvents(first, async ({ event }) => {
      if (event !== 'content') return;
      const second = await app.request(`/api/agent/sessions/${id}/turns`, request('POST', { message: 'again' }));
      expect(second.status).toBe(409);
      expect((await app.request(`/api/agent/sessions/${id}`, request('DELETE'))).status).toBe(409);
      expect(((await (await app.request(`/api/agent/sessions/${id}/turns/cancel`, request('POST', {}))).json()) as { cancelled: boolean }).cancelled).toBe(true);
    });
    const seen = await events;
    release();
    expect(seen.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
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
      expect((await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['green']] }))).status).toBe(409);
      expect((await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['blue']] }))).status).toBe(200);
      expect((await app.request(`/api/agent/sessions/${id}/questions/${questionID}/answer`, request('POST', { answers: [['red']] }))).status).toBe(404);
    });
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toContain('Which colour?\nblue');
  });
});
