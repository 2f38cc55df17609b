import { describe, expect, it } from 'vitest';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelMessage, ModelProvider } from '../../../core/turn/model-provider.js';
import { nativeOf } from '../../../plugins/providers/conversation.js';
import { framesFor, framesUntilText } from '../../../fakes/wire-frames.js';
import { KEY, sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

/** A history as compaction can leave it: the summary, then an answer with a call, before any user turn. */
const afterCompaction: ModelMessage[] = [
  { role: 'system', content: 'You are Quire.' },
  { role: 'system', content: 'Summary of earlier messages.' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'notebook_list', arguments: '{}' }] },
  { role: 'tool', toolCallId: 'call_1', content: '' },
  { role: 'assistant', content: '   ' },
  { role: 'user', content: 'go on' },
];

async function drain(provider: ModelProvider, messages: ModelMessage[]): Promise<void> {
  for await (const _event of provider.stream({ messages, tools: [] }, new AbortController().signal)) { /* read all */ }
}

/** The calls a provider streams for one request: each start, and each call's arguments by index (and all of them together). */
async function streamedCalls(provider: ModelProvider) {
  const started: { index: number; id: string; name: string }[] = [];
  const args = new Map<number, string>();
  let all = '';
  for await (const event of provider.stream({ messages: [{ role: 'user', content: 'go' }], tools: [] }, new AbortController().signal)) {
    if (event.type === 'tool_call_start') started.push({ index: event.index, id: event.id, name: event.name });
    if (event.type === 'tool_call_delta') {
      args.set(event.index, (args.get(event.index) ?? '') + event.argumentsDelta);
      all += event.argumentsDelta;
    }
  }
  return { started, args, all };
}

describe('what the APIs refuse, kept out of requests', () => {
  it('Anthropic: the first message is the user\'s, and no text block is empty', async () => {
    const { kernel, fake } = await start('anthropic');
    fake.reply(sse('anthropic', { text: 'ok' }));
    await drain(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER), afterCompaction);
    const messages = fake.posts[0]!.body.messages as { role: string; content: { type: string; text?: string; content?: string }[] }[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    for (const block of messages.flatMap((message) => message.content)) {
      if (block.type === 'text') expect(block.text!.trim()).not.toBe('');
      if (block.type === 'tool_result') expect(block.content!.trim()).not.toBe('');
    }
    // No tools offered (the round after maxToolRounds), yet calls in the history: the API refuses a request
    // whose tool_use blocks have no tools defined; they are, by name, and no call is allowed.
    expect(fake.posts[0]!.body.tools).toEqual([{ name: 'notebook_list', description: 'Not offered now: answer without calling it.', input_schema: { type: 'object' } }]);
    expect(fake.posts[0]!.body.tool_choice).toEqual({ type: 'none' });
  });

  it('Gemini: the first content is the user\'s, and no part is an empty text', async () => {
    const { kernel, fake } = await start('gemini');
    fake.reply(sse('gemini', { text: 'ok' }));
    await drain(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER), afterCompaction);
    const contents = fake.posts[0]!.body.contents as { role: string; parts: { text?: string }[] }[];
    expect(contents[0]!.role).toBe('user');
    expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user']);
    for (const part of contents.flatMap((content) => content.parts)) if ('text' in part) expect(part.text!.trim()).not.toBe('');
  });

  it('replays provider state only to the protocol, model and server that made it', () => {
    const origin = { protocol: 'anthropic', model: 'claude-a', baseURL: 'https://api.anthropic.com' };
    const data = { ...origin, content: [] };
    expect(nativeOf(data, origin)).toBe(data);
    expect(nativeOf(data, { ...origin, model: 'claude-b' })).toBeUndefined();
    expect(nativeOf(data, { ...origin, baseURL: 'http://127.0.0.1:9000' })).toBeUndefined();
  });
});

describe('calls as compatible servers stream them', () => {
  it('Chat Completions: two calls streamed at the same index, told apart by their ids, stay two calls', async () => {
    const { kernel, fake } = await start('openai-chat');
    const calls = [{ id: 'call_a', name: 'notebook_list', args: { limit: 1 } }, { id: 'call_b', name: 'document_get', args: { id: 'x' } }];
    // Such a server numbers every call 0.
    fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { calls }).map((frame) => frame.replaceAll('"index":1', '"index":0')) });
    const { started, args } = await streamedCalls(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER));
    expect(started.map(({ id, name }) => [id, name])).toEqual([['call_a', 'notebook_list'], ['call_b', 'document_get']]);
    expect(started.map(({ index }) => JSON.parse(args.get(index)!))).toEqual([{ limit: 1 }, { id: 'x' }]);
  });

  it('Chat Completions: two calls streamed at one index without ids stay two calls, told apart by their names', async () => {
    const { kernel, fake } = await start('openai-chat');
    const calls = [{ id: 'call_a', name: 'notebook_list', args: { limit: 1 } }, { id: 'call_b', name: 'notebook_list', args: { limit: 2 } }];
    // A compatible server that sends neither ids nor distinct indexes.
    fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { calls }).map((frame) => frame.replaceAll('"index":1', '"index":0').replace(/"id":"call_[ab]",/g, '')) });
    const { started, args } = await streamedCalls(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER));
    expect(started.map(({ name }) => name)).toEqual(['notebook_list', 'notebook_list']);
    expect(new Set(started.map(({ id }) => id)).size).toBe(2);
    expect(started.map(({ index }) => JSON.parse(args.get(index)!))).toEqual([{ limit: 1 }, { limit: 2 }]);
  });

  it('Chat Completions: one call whose every chunk repeats its name (or sends it null) stays one call', async () => {
    const { kernel, fake } = await start('openai-chat');
    const calls = [{ id: 'call_a', name: 'notebook_list', args: { limit: 1, offset: 2 } }];
    const frames = framesFor('openai-chat', { calls }).map((frame) => frame.replace(/"id":"call_a",/g, ''));
    // Every argument chunk names the call again; one names it null.
    const named = frames.map((frame, i) => (frame.includes('"arguments":"') && !frame.includes('"name"') ? frame.replace('"function":{', i % 2 === 0 ? '"function":{"name":"notebook_list",' : '"function":{"name":null,') : frame));
    // And a last chunk naming it once more, with no arguments of its own.
    const last = named.findLastIndex((frame) => frame.includes('"arguments":"'));
    named.splice(last + 1, 0, named[last]!.replace(/"arguments":"(?:[^"\\]|\\.)*"/, '"arguments":""'));
    fake.reply({ kind: 'sse', frames: named });
    const { started, all } = await streamedCalls(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER));
    expect(started.map(({ name }) => name)).toEqual(['notebook_list']);
    expect(JSON.parse(all)).toEqual({ limit: 1, offset: 2 });
  });

  it('Responses: a model that does not reason, refusing encrypted reasoning, is asked again without it, and never with it after', async () => {
    const { kernel, fake } = await start('openai-responses');
    const refusal = { error: { message: 'Encrypted content is not supported with this model.', type: 'invalid_request_error', param: 'include', code: null } };
    fake.reply({ kind: 'json', status: 400, body: refusal }, sse('openai-responses', { text: 'ok' }), sse('openai-responses', { text: 'ok again' }));
    const provider = kernel.container.resolve<ModelProvider>(MODEL_PROVIDER);
    await drain(provider, [{ role: 'user', content: 'hello' }]);
    await drain(provider, [{ role: 'user', content: 'hello again' }]);
    expect(fake.posts.map((post) => post.body.include)).toEqual([['reasoning.encrypted_content'], undefined, undefined]);
  });

  it('Responses: encrypted reasoning that could not be verified fails that request only, and is asked for again after', async () => {
    const { kernel, fake } = await start('openai-responses');
    const unverified = { error: { message: 'The encrypted content gAAAA could not be verified.', type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } };
    fake.reply({ kind: 'json', status: 400, body: unverified }, sse('openai-responses', { text: 'ok' }));
    const provider = kernel.container.resolve<ModelProvider>(MODEL_PROVIDER);
    await expect(drain(provider, [{ role: 'user', content: 'hello' }])).rejects.toMatchObject({ message: expect.stringContaining('could not be verified') });
    await drain(provider, [{ role: 'user', content: 'hello again' }]);
    expect(fake.posts.map((post) => post.body.include)).toEqual([['reasoning.encrypted_content'], ['reasoning.encrypted_content']]);
  });

  it('Gemini: a request the server took says so at once, so that one then silent (thinking unseen) is tried once more, not five times', async () => {
    const { kernel, fake } = await start('gemini');
    fake.reply({ kind: 'sse', frames: framesFor('gemini', { text: 'late' }), stallAfter: 0 });
    const controller = new AbortController();
    const events = kernel.container.resolve<ModelProvider>(MODEL_PROVIDER).stream({ messages: [{ role: 'user', content: 'go' }], tools: [] }, controller.signal)[Symbol.asyncIterator]();
    const first = await Promise.race([events.next(), new Promise((resolve) => setTimeout(() => resolve('nothing within 3 s'), 3_000))]);
    controller.abort();
    expect(first).toEqual({ done: false, value: { type: 'keepalive' } });
  });

  it('Responses: a call whose arguments come whole at its end only runs with them, not with none', async () => {
    const { kernel, fake } = await start('openai-responses');
    const calls = [{ id: 'call_a', name: 'notebook_list', args: { limit: 3 } }];
    // A compatible server that streams no argument deltas.
    fake.reply({ kind: 'sse', frames: framesFor('openai-responses', { calls }).filter((frame) => !frame.includes('response.function_call_arguments.delta')) });
    const { all } = await streamedCalls(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER));
    expect(JSON.parse(all)).toEqual({ limit: 3 });
  });

  it('Chat Completions: a system message after the first turn reaches a compatible server as a marked note, not a second system message', async () => {
    const { kernel, fake } = await start('openai-chat');
    fake.reply(sse('openai-chat', { text: 'ok' }));
    // As the doom-loop rule's warning is added, after tool results.
    await drain(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER), [
      { role: 'system', content: 'You are Quire.' }, { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'notebook_list', arguments: '{}' }] }, { role: 'tool', toolCallId: 'call_1', content: 'none' },
      { role: 'system', content: 'The same call failed three times.' },
    ]);
    const messages = fake.posts[0]!.body.messages as { role: string; content: string | null }[];
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(messages.at(-1)!.content).toContain('<system-note>');
  });

  it('Responses: a whole sent again at a call\'s end, spaced otherwise, is the same call', async () => {
    const { kernel, fake } = await start('openai-responses');
    const calls = [{ id: 'call_a', name: 'notebook_list', args: { limit: 3 } }];
    const frames = framesFor('openai-responses', { calls }).map((frame) => (frame.includes('response.output_item.done') ? frame.replace('{\\"limit\\":3}', '{\\"limit\\": 3}') : frame));
    expect(frames.some((frame) => frame.includes('{\\"limit\\": 3}'))).toBe(true);
    fake.reply({ kind: 'sse', frames });
    const { all } = await streamedCalls(kernel.container.resolve<ModelProvider>(MODEL_PROVIDER));
    expect(JSON.parse(all)).toEqual({ limit: 3 });
  });

  it('Chat Completions: usage sent as a running total on every chunk is counted once', async () => {
    const { fake, session, turn } = await start('openai-chat');
    // As vLLM's continuous usage stats: each chunk carries the totals so far.
    const frames = framesFor('openai-chat', { text: 'one two three', deltas: ['one ', 'two ', 'three'] })
      .map((frame) => frame.replace(/"choices":\[\{/, '"usage":{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43},"choices":[{'));
    fake.reply({ kind: 'sse', frames });
    const { events } = await turn(await session(), 'hi');
    const usage = events.find((event) => event.event === 'usage');
    expect(usage?.data).toMatchObject({ promptTokens: expect.any(Number) });
    expect((usage!.data as { promptTokens: number }).promptTokens).toBeLessThanOrEqual(40);
  });

  it('keeps the key and most of a long server message out of a model error', async () => {
    const { fake, session, turn } = await start('openai-chat');
    fake.reply({ kind: 'json', status: 400, body: { error: { message: `invalid request with key ${KEY}: ${'the note text echoed back '.repeat(100)}`, type: 'invalid_request_error' } } });
    const { events } = await turn(await session(), 'hi');
    const error = events.find((event) => event.event === 'error')!.data as { message: string };
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('[key]');
    expect(error.message.length).toBeLessThan(700);
  });
});

describe('answers that are not whole', () => {
  it('Chat Completions: a stream cut before its finish reason is an error, not an answer', async () => {
    const { fake, session, turn } = await start('openai-chat');
    fake.reply({ kind: 'sse', frames: framesUntilText('openai-chat') });
    const { events } = await turn(await session(), 'hi');
    expect(events.find((event) => event.event === 'error')).toMatchObject({ data: { code: 'MODEL_SERVER' } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
  });

  it('Gemini: a refused prompt ends the turn saying so (MODEL_REFUSED), without retrying', async () => {
    const { fake, session, turn } = await start('gemini');
    fake.reply({ kind: 'sse', frames: [`data: ${JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, modelVersion: 'gemini-fake' })}\r\n\r\n`] });
    const { events } = await turn(await session(), 'hi');
    expect(events.find((event) => event.event === 'error')).toMatchObject({ data: { code: 'MODEL_REFUSED' } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'interrupted' } });
    expect(events.some((event) => event.event === 'retry')).toBe(false);
    expect(fake.posts).toHaveLength(1);
  });
});
