import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { readEvents } from '../../helpers/sse-events.js';
import { sse, useProviderKernel, MODEL } from '../../plugins/providers/provider-harness.js';

/** Issue 17, points 5 and 6: the usage ledger and budgets, through the real OpenAI SDK and its loopback fake. */
const { start } = useProviderKernel();

interface UsageAnswer { rows: { key: string; requests: number; input: number; cachedInput: number; output: number; reasoning: number; cost: number | null; unpricedTokens: number }[]; total: { cost: number | null; input: number; output: number } }

describe('the usage ledger', () => {
  it('records every request of a turn per session, turn, provider and model, prices it, carries the running cost in the usage event, and keeps it across a restart', async () => {
    const prices = { [MODEL]: { input: 2, cachedInput: 1, output: 10 } };
    const kit = await start('openai-chat', { kernelConfig: { usage: { prices } } });
    const doc = await kit.act<{ id: string }>('notebook_create', { name: 'N' });
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_a', name: 'document_list', args: { notebook: doc.id } }], usage: { input: 1_000, output: 100 } }),
      sse('openai-chat', { text: 'Nothing there.', usage: { input: 2_000, output: 50 } }),
    );
    const session = await kit.session();
    const { events } = await kit.turn(session, 'What is in N?');
    const usage = events.filter((event) => event.event === 'usage').at(-1)!;
    // (1000 + 2000) input at $2/M + (100 + 50) output at $10/M = $0.0075
    expect(usage.data).toMatchObject({ promptTokens: 3_000, completionTokens: 150, cost: 0.0075 });
    const byModel = await (await kit.http('GET', '/api/usage?by=model')).json() as UsageAnswer;
    expect(byModel.rows).toEqual([{ key: `openai-chat/${MODEL}`, requests: 2, input: 3_000, cachedInput: 0, output: 150, reasoning: 0, cost: 0.0075, unpricedTokens: 0 }]);
    const bySession = await (await kit.http('GET', '/api/usage?by=session')).json() as UsageAnswer;
    expect(bySession.rows.map((row) => row.key)).toEqual([session]);
    expect((await kit.http('GET', '/api/usage?by=week')).status).toBe(400);
    const root = kit.kernel.workspace.root;
    await kit.kernel.close();
    // Durable: another kernel over the same workspace, and the CLI beside it, read the same figures.
    const again = await start('openai-chat', { workspace: root, kernelConfig: { usage: { prices } } });
    expect(((await (await again.http('GET', '/api/usage?by=day')).json()) as UsageAnswer).total).toMatchObject({ input: 3_000, output: 150, cost: 0.0075 });
    // The CLI prices from the workspace's quire.json.
    await writeFile(again.kernel.workspace.configFile, JSON.stringify({ usage: { prices } }));
    const io = bufferIO();
    expect(await runCli(['usage', '--by', 'model', '--workspace', `${root}-typo`], bufferIO())).toBe(1);
    // A day that does not exist is refused (it answered "no usage recorded yet").
    for (const since of ['2024-13-45', '2024-02-31']) {
      const refused = bufferIO();
      expect(await runCli(['usage', '--since', since, '--workspace', root], refused)).toBe(2);
      expect(refused.errText()).toContain(`--since must be a day as YYYY-MM-DD, not '${since}'`);
    }
    expect(await runCli(['usage', '--by', 'model', '--workspace', root], io)).toBe(0);
    expect(io.outText()).toContain(`openai-chat/${MODEL}  2 requests  in 3000 (cached 0)  out 150 (reasoning 0)  $0.0075`);
  });

  it('shows a model without a price as unknown, never as free', async () => {
    const kit = await start('openai-chat');
    kit.fake.reply(sse('openai-chat', { text: 'Hi.', usage: { input: 500, output: 20 } }));
    const { events } = await kit.turn(await kit.session(), 'hello');
    expect(events.filter((event) => event.event === 'usage').at(-1)!.data).toMatchObject({ cost: null });
    const answer = await (await kit.http('GET', '/api/usage?by=model')).json() as UsageAnswer;
    expect(answer.rows[0]).toMatchObject({ cost: null, unpricedTokens: 520 });
  });
});

describe('budgets', () => {
  it('stops the turn with BUDGET_EXCEEDED before a request that could pass the session budget, and sends nothing more', async () => {
    const probe = await start('openai-chat', { agent: { maxOutputTokens: 100 } });
    const preview = await (await probe.http('GET', `/api/agent/sessions/${await probe.session()}/preview?message=${encodeURIComponent('What is in N?')}`)).json() as { preview: { tokens: { prompt: number } } };
    const first = preview.preview.tokens.prompt;
    // Room for the first request (its prompt and the largest answer) and what it reports, not for the second.
    const kit = await start('openai-chat', { agent: { maxOutputTokens: 100 }, kernelConfig: { budgets: { session: { tokens: first + 100 + 40 } } } });
    const doc = await kit.act<{ id: string }>('notebook_create', { name: 'N' });
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_a', name: 'document_list', args: { notebook: doc.id } }], usage: { input: 20, output: 7 } }),
      sse('openai-chat', { text: 'never sent' }),
    );
    const { events } = await kit.turn(await kit.session(), 'What is in N?');
    expect(kit.fake.posts).toHaveLength(1);
    const error = events.find((event) => event.event === 'error');
    expect(error?.data).toMatchObject({ code: 'BUDGET_EXCEEDED' });
    expect(String(error?.data.message)).toContain('session budget');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
  });

  it('counts the agent\'s model requests only: an embedder\'s indexing (unpriced, a million tokens) leaves the day\'s budgets alone', async () => {
    const prices = { [MODEL]: { input: 1, output: 1 } };
    const kit = await start('openai-chat', { agent: { maxOutputTokens: 100 }, kernelConfig: { usage: { prices }, budgets: { day: { tokens: 500_000, usd: 1 } } } });
    kit.kernel.usage.record({ kind: 'embedding', provider: 'providers/openai', model: 'unpriced-embedder', input: 1_000_000, cachedInput: 0, output: 0, reasoning: 0, estimated: true });
    kit.fake.reply(sse('openai-chat', { text: 'Sent.', usage: { input: 20, output: 3 } }));
    const { events } = await kit.turn(await kit.session(), 'hello');
    expect(events.find((event) => event.event === 'error')).toBeUndefined();
    expect(kit.fake.posts).toHaveLength(1);
  });

  it('still counts usage the ledger could not record (a full disk) against the budgets', async () => {
    const probe = await start('openai-chat', { agent: { maxOutputTokens: 100 } });
    const preview = await (await probe.http('GET', `/api/agent/sessions/${await probe.session()}/preview?message=${encodeURIComponent('What is in N?')}`)).json() as { preview: { tokens: { prompt: number } } };
    // Room for the second request's prompt and answer, not for the 2,000 tokens the first reports.
    const kit = await start('openai-chat', { agent: { maxOutputTokens: 100 }, kernelConfig: { budgets: { session: { tokens: preview.preview.tokens.prompt + 100 + 1_000 } } } });
    kit.kernel.usage.record = () => { throw new Error('SQLITE_FULL: database or disk is full'); };
    const doc = await kit.act<{ id: string }>('notebook_create', { name: 'N' });
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_a', name: 'document_list', args: { notebook: doc.id } }], usage: { input: 2_000, output: 7 } }),
      sse('openai-chat', { text: 'never sent' }),
    );
    const { events } = await kit.turn(await kit.session(), 'What is in N?');
    expect(kit.fake.posts).toHaveLength(1);
    expect(events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'BUDGET_EXCEEDED' });
  });

  it('refuses a money budget it cannot keep: the model has no price', async () => {
    const kit = await start('openai-chat', { kernelConfig: { budgets: { day: { usd: 1 } } } });
    kit.fake.reply(sse('openai-chat', { text: 'never sent' }));
    const { events } = await kit.turn(await kit.session(), 'hello');
    expect(kit.fake.posts).toHaveLength(0);
    expect(events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'BUDGET_EXCEEDED', message: expect.stringContaining(`the price of model '${MODEL}' is unknown`) });
  });

  it('keeps a money budget per turn from the price table', async () => {
    const kit = await start('openai-chat', { agent: { maxOutputTokens: 1_000 }, kernelConfig: { usage: { prices: { [MODEL]: { input: 1_000, output: 1_000 } } }, budgets: { turn: { usd: 0.5 } } } });
    kit.fake.reply(sse('openai-chat', { text: 'never sent' }));
    const session = await kit.session();
    // The preview prices the next request the same way: the prompt at $1,000/M plus 1,000 output tokens at $1,000/M.
    const { preview } = await (await kit.http('GET', `/api/agent/sessions/${session}/preview?message=hello`)).json() as { preview: { cost: number; tokens: { prompt: number } } };
    expect(preview.cost).toBeCloseTo((preview.tokens.prompt + 1_000) / 1_000, 9);
    // A request of 1,000 output tokens at $1,000/M may cost $1 alone: over $0.50.
    const { events } = await kit.turn(session, 'hello');
    expect(kit.fake.posts).toHaveLength(0);
    expect(events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'BUDGET_EXCEEDED', message: expect.stringContaining('turn budget of $0.5') });
  });

  it('prices the worst case of an answer at the reasoning price when it is the dearer: an answer may be reasoning only', async () => {
    // Output $100/M, reasoning $2,000/M: 1,000 tokens of reasoning may cost $2, over a $1.50 turn budget.
    const kit = await start('openai-chat', { agent: { maxOutputTokens: 1_000 }, kernelConfig: { usage: { prices: { [MODEL]: { input: 1, output: 100, reasoning: 2_000 } } }, budgets: { turn: { usd: 1.5 } } } });
    kit.fake.reply(sse('openai-chat', { text: 'never sent' }));
    const session = await kit.session();
    const { preview } = await (await kit.http('GET', `/api/agent/sessions/${session}/preview?message=hello`)).json() as { preview: { cost: number; tokens: { prompt: number } } };
    expect(preview.cost).toBeCloseTo((preview.tokens.prompt * 1 + 1_000 * 2_000) / 1_000_000, 9);
    const { events } = await kit.turn(session, 'hello');
    expect(kit.fake.posts).toHaveLength(0);
    expect(events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'BUDGET_EXCEEDED', message: expect.stringContaining('turn budget of $1.5') });
  });

  it('asks the person to go past a budget when budgets.whenExceeded is ask: yes sends the request, no stops the turn', async () => {
    const kit = await start('openai-chat', { kernelConfig: { budgets: { turn: { tokens: 50 }, whenExceeded: 'ask' } } });
    kit.fake.reply(sse('openai-chat', { text: 'Hello.' }));
    const session = await kit.session();
    const asked: Record<string, unknown>[] = [];
    const statuses: number[] = [];
    const answer = async (approved: boolean) => {
      const response = await kit.http('POST', `/api/agent/sessions/${session}/turns`, { message: 'hello' });
      const events = await readEvents(response, async (event) => {
        if (event.event !== 'confirm') return;
        const confirmation = event.data.confirmation as { id: string; argsHash: string; kind?: string; arguments: Record<string, unknown> };
        asked.push({ kind: confirmation.kind, ...confirmation.arguments });
        // "always" is refused: budgets in quire.json are the standing answer.
        statuses.push((await kit.http('POST', `/api/agent/sessions/${session}/confirmations/${confirmation.id}/answer`, { approved, always: true, argsHash: confirmation.argsHash })).status);
        await kit.http('POST', `/api/agent/sessions/${session}/confirmations/${confirmation.id}/answer`, { approved, argsHash: confirmation.argsHash });
      });
      return { events };
    };
    const yes = await answer(true);
    expect(statuses).toEqual([400]);
    expect(kit.fake.posts).toHaveLength(1);
    expect(yes.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(asked[0]).toMatchObject({ kind: 'budget', budget: 'turn', limit: { tokens: 50 }, why: expect.stringContaining('over the turn budget of 50 tokens') });
    const no = await answer(false);
    expect(kit.fake.posts).toHaveLength(1);
    expect(no.events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'BUDGET_EXCEEDED' });
  });

  it('ends a turn stopped while its budget question is open as stopped, not as over its budget', async () => {
    const kit = await start('openai-chat', { kernelConfig: { budgets: { turn: { tokens: 50 }, whenExceeded: 'ask' } } });
    const session = await kit.session();
    const response = await kit.http('POST', `/api/agent/sessions/${session}/turns`, { message: 'hello there' });
    const events = await readEvents(response, async (event) => {
      if (event.event === 'confirm') await kit.http('POST', `/api/agent/sessions/${session}/turns/cancel`, {});
    });
    expect(events.filter((event) => event.event === 'error')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(kit.fake.posts).toHaveLength(0);
  });

  it('waits for the person\'s answer to a budget question longer than the stream\'s idle limit', async () => {
    const kit = await start('openai-chat', { agent: { idleTimeoutMs: 1_000 }, kernelConfig: { budgets: { turn: { tokens: 50 }, whenExceeded: 'ask' } } });
    kit.fake.reply(sse('openai-chat', { text: 'Hello.' }));
    const session = await kit.session();
    const response = await kit.http('POST', `/api/agent/sessions/${session}/turns`, { message: 'hello' });
    const events = await readEvents(response, async (event) => {
      if (event.event !== 'confirm') return;
      const confirmation = event.data.confirmation as { id: string; argsHash: string };
      // The person takes longer than the idle watchdog allows a silent stream.
      setTimeout(() => { void kit.http('POST', `/api/agent/sessions/${session}/confirmations/${confirmation.id}/answer`, { approved: true, argsHash: confirmation.argsHash }); }, 3_000);
    });
    expect(events.filter((event) => event.event === 'confirm')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(kit.fake.posts).toHaveLength(1);
  });
});
