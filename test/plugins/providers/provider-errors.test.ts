import { describe, expect, it } from 'vitest';
import { framesUntilCall, framesUntilText, midStreamError, overflowBody, rateLimitBody } from '../../../fakes/wire-frames.js';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelProvider } from '../../../core/turn/model-provider.js';
import { KEY, PROTOCOLS, sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

const words = (count: number, stem: string) => Array.from({ length: count }, (_, i) => `${stem}${i}`).join(' ');

describe.each(PROTOCOLS)('how %s fails, through the real SDK and the turn loop', (protocol) => {
  it('waits out a 429 with retry-after-ms and then succeeds', async () => {
    const { fake, session, turn } = await start(protocol);
    fake.reply({ kind: 'json', status: 429, body: rateLimitBody(protocol), headers: { 'retry-after-ms': '5', 'retry-after': '1' } }, sse(protocol, { text: 'after the wait' }));
    const { events } = await turn(await session(), 'hi');
    // The server's word is taken (5 ms), not our own backoff of a second or more.
    expect(events.find((event) => event.event === 'retry')).toMatchObject({ data: { category: 'rate_limit', delayMs: 5 } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(fake.posts).toHaveLength(2);
  });

  it('stops a stream that stalls after its headers, as interrupted, without repeating it once text arrived', async () => {
    // The idle limit also covers the request's connection and its first frames: room for a loaded machine.
    const { fake, session, turn } = await start(protocol, { agent: { idleTimeoutMs: 1_000 } });
    const frames = framesUntilText(protocol);
    fake.reply({ kind: 'sse', frames: [...frames, 'never sent'], stallAfter: frames.length });
    const { events } = await turn(await session(), 'hi');
    expect(events.find((event) => event.event === 'error')).toMatchObject({ data: { code: 'MODEL_TIMEOUT' } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(fake.posts).toHaveLength(1);
  });

  it('ends the turn on an error in the middle of the stream, keeping the partial text and not retrying', async () => {
    const { kernel, fake, session, turn } = await start(protocol);
    fake.reply({ kind: 'sse', frames: midStreamError(protocol) });
    const id = await session();
    const { events } = await turn(id, 'hi');
    expect(events.find((event) => event.event === 'error')).toMatchObject({ data: { code: 'MODEL_SERVER' } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(fake.posts).toHaveLength(1);
    expect(JSON.stringify(await kernel.sessions.read(id))).toContain('partia');
  });

  it('never repeats a stream that failed after emitting a tool call, and runs no call from it', async () => {
    const { fake, session, turn } = await start(protocol);
    fake.reply({ kind: 'sse', frames: midStreamError(protocol, framesUntilCall(protocol, { id: 'call_x', name: 'notebook_list', args: {} })) });
    const { events } = await turn(await session(), 'hi');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(events.some((event) => event.event === 'tool_result' || event.event === 'retry')).toBe(false);
    expect(fake.posts).toHaveLength(1);
  });

  it('closes the connection when the person cancels', async () => {
    const { fake, http, session, turn } = await start(protocol);
    const frames = framesUntilText(protocol);
    fake.reply({ kind: 'sse', frames: [...frames, 'never sent'], stallAfter: frames.length });
    const id = await session();
    let cancelled = false;
    const { events } = await turn(id, 'hi', async (event) => {
      if (event.event !== 'content' || cancelled) return;
      cancelled = true;
      await http('POST', `/api/agent/sessions/${id}/turns/cancel`, {});
    });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(await fake.posts[0]!.closedEarly).toBe(true);
  });

  it('compacts once when the server says the context overflowed, then answers', async () => {
    const { kernel, fake, session, turn } = await start(protocol, { model: { contextLimit: 100_000 } });
    const id = await session();
    const history = Array.from({ length: 10 }, (_, i) => [
      { id: `u${i}`, type: 'user', content: words(150, `q${i}w`) },
      { id: `a${i}`, type: 'assistant', content: words(150, `a${i}w`) },
    ]).flat();
    const stored = await kernel.sessions.readStored(id);
    await kernel.sessions.save({ id, entries: history, expectedRevision: stored.revision });
    fake.reply({ kind: 'json', status: 400, body: overflowBody(protocol) }, sse(protocol, { text: 'SUMMARY OF EARLIER WORK' }), sse(protocol, { text: 'fits now' }));
    const { events } = await turn(id, 'go on');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(fake.posts).toHaveLength(3);
    expect(JSON.stringify(fake.posts[1]!.body)).toContain('new_history_json');
    expect(JSON.stringify(fake.posts[2]!.body)).toContain('SUMMARY OF EARLIER WORK');
  });

  it('reports a refused key by the variable it came from, never with the server\'s words (which may quote the key)', async () => {
    const { fake, session, turn } = await start(protocol);
    fake.reply({ kind: 'json', status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const { events } = await turn(await session(), 'hi');
    const error = events.find((event) => event.event === 'error')!;
    expect(error.data.code).toBe('MODEL_AUTHENTICATION');
    expect(String(error.data.message)).toContain('QUIRE_TEST_MODEL_KEY');
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(fake.posts).toHaveLength(1);
  });

  it('refuses a turn before any request when the key is missing or the model unknown, naming what to fix', async () => {
    const missing = await start(protocol, { key: undefined });
    const noKey = await missing.turn(await missing.session(), 'hi');
    expect(noKey.status).toBe(503);
    expect(noKey.body!.error.message).toContain('QUIRE_TEST_MODEL_KEY');
    expect(missing.fake.received).toHaveLength(0);
    // Said at start too, as a configuration problem `quire serve` prints (a JSON log line only before).
    expect(missing.kernel.configProblems()).toContainEqual(expect.objectContaining({ code: 'CONFIG_MODEL_UNAVAILABLE', pointer: '/plugins/providers/config/model/apiKeyEnv', message: expect.stringContaining('QUIRE_TEST_MODEL_KEY') }));

    // A key pasted where the variable's name goes (a Gemini key fits the name's pattern) is refused, never repeated.
    const pasted = 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q';
    const keyAsName = await start(protocol, { model: { apiKeyEnv: pasted } });
    const refused = await keyAsName.turn(await keyAsName.session(), 'hi');
    expect([refused.status, JSON.stringify(refused.body).includes(pasted.slice(4, 20)), refused.body!.error.message]).toEqual([503, false, expect.stringContaining('looks like a key')]);
    expect(JSON.stringify(keyAsName.kernel.configProblems())).not.toContain(pasted.slice(4, 20));
    // An OpenAI or Anthropic key (hyphens, not a name): the kernel did not start at all (the schema's pattern), notes unreadable.
    const hyphened = 'sk-proj-Zq81Xw72Vu63Ts54Rq45Po36';
    const hyphenKey = await start(protocol, { model: { apiKeyEnv: hyphened } });
    const refusedToo = await hyphenKey.turn(await hyphenKey.session(), 'hi');
    expect([refusedToo.status, JSON.stringify(refusedToo.body).includes(hyphened.slice(8, 20)), refusedToo.body!.error.message]).toEqual([503, false, expect.stringContaining('looks like a key')]);
    expect(JSON.stringify(hyphenKey.kernel.configProblems())).not.toContain(hyphened.slice(8, 20));
    // A working model is no problem.
    expect(typeof (await start(protocol)).kernel.configProblems().find((problem) => problem.code === 'CONFIG_MODEL_UNAVAILABLE')).toBe('undefined');

    // No server at the address: the error names which (it said "Connection error." alone); a key in the query stays out.
    const closed = await start(protocol, { model: { baseURL: 'http://127.0.0.1:9/v1?api_key=k3y' } });
    const provider = closed.kernel.container.resolve<ModelProvider>(MODEL_PROVIDER);
    const said = await (async () => {
      try {
        for await (const _event of provider.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] }, new AbortController().signal)) { /* none */ }
        return 'no error';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(said).toMatch(/at http:\/\/127\.0\.0\.1:9\/v1 cannot be reached/);
    expect(said).not.toContain('k3y');

    // A user and password in the address: fetch refused every request; now the model is unavailable from the start, saying why and not how.
    const credentials = await start(protocol, { model: { baseURL: 'http://me:s3cret@127.0.0.1:9/v1' } });
    const refusedAddress = await credentials.turn(await credentials.session(), 'hi');
    expect([refusedAddress.status, refusedAddress.body!.error.message, JSON.stringify(refusedAddress.body).includes('s3cret')]).toEqual([503, expect.stringContaining('baseURL holds a user name or password'), false]);
    expect(credentials.kernel.configProblems()).toContainEqual(expect.objectContaining({ code: 'CONFIG_MODEL_UNAVAILABLE', pointer: '/plugins/providers/config/model/baseURL' }));

    const typo = await start(protocol, { model: { model: 'no-such-model' } });
    const unknown = await typo.turn(await typo.session(), 'hi');
    expect(unknown.status).toBe(503);
    expect(unknown.body!.error.message).toContain("'no-such-model'");
    expect(typo.fake.posts).toHaveLength(0);
  });
});
