import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WireProtocol } from '../../../fakes/wire-frames.js';
import { KEY, PROTOCOLS, sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

interface Created { id: string }

/** Every file under `root`, read as text. */
async function allText(root: string): Promise<string> {
  const out: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.push(await readFile(join(entry.parentPath, entry.name), 'utf8').catch(() => ''));
  }
  return out.join('\n');
}

/** What the second request must carry back: the calls, their results, and the provider's own state. */
function expectReplay(protocol: WireProtocol, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  switch (protocol) {
    case 'openai-chat': {
      const messages = body.messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
      const assistant = messages.find((message) => message.role === 'assistant')!;
      expect(assistant.tool_calls!.map((call) => call.id)).toEqual(['call_a', 'call_b']);
      expect(messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id)).toEqual(['call_a', 'call_b']);
      expect(body.stream_options).toEqual({ include_usage: true });
      return;
    }
    case 'openai-responses': {
      const input = body.input as { type?: string; role?: string; encrypted_content?: string; call_id?: string }[];
      // The encrypted reasoning goes back verbatim, before the calls it led to, then each call's output.
      expect(input.map((item) => item.type ?? item.role)).toEqual(['user', 'reasoning', 'function_call', 'function_call', 'function_call_output', 'function_call_output']);
      expect(input[1]!.encrypted_content).toBe('SECRET-1');
      expect(input.slice(4).map((item) => item.call_id)).toEqual(['call_a', 'call_b']);
      expect(body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
      return;
    }
    case 'anthropic': {
      const messages = body.messages as { role: string; content: { type: string; signature?: string; thinking?: string; id?: string; tool_use_id?: string }[] }[];
      expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
      expect(messages[1]!.content.map((block) => block.type)).toEqual(['thinking', 'tool_use', 'tool_use']);
      expect(messages[1]!.content[0]).toEqual({ type: 'thinking', thinking: 'Planning', signature: 'SECRET-1' });
      expect(messages[2]!.content.map((block) => [block.type, block.tool_use_id])).toEqual([['tool_result', 'call_a'], ['tool_result', 'call_b']]);
      return;
    }
    case 'gemini': {
      const contents = body.contents as { role: string; parts: { functionCall?: { name: string }; thoughtSignature?: string; functionResponse?: { name: string } }[] }[];
      expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user']);
      const call = contents[1]!.parts.find((part) => part.functionCall?.name === 'notebook_list')!;
      // The signature stays on the very part it came with.
      expect(call.thoughtSignature).toBe('SECRET-1');
      expect(contents[2]!.parts.map((part) => part.functionResponse?.name)).toEqual(['notebook_list', 'block_append']);
      expect(text).not.toContain('gemini-call-');
      return;
    }
  }
}

describe.each(PROTOCOLS)('a whole agent turn on %s, through the real SDK and HTTP/SSE', (protocol) => {
  it('calls two tools in parallel, waits for the confirmation of the write, runs both, replays its state and answers', async () => {
    const { kernel, act, fake, session, turn } = await start(protocol);
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'first' });
    fake.reply(
      sse(protocol, { reasoning: 'Planning', secret: 'SECRET-1', calls: [{ id: 'call_a', name: 'notebook_list', args: {} }, { id: 'call_b', name: 'block_append', args: { parentId: doc.id, markdown: 'from the model' } }], usage: { input: 20, output: 7 } }),
      sse(protocol, { text: 'Appended.', usage: { input: 40, output: 3 } }),
    );
    const id = await session();
    const { events } = await turn(id, 'add a line');
    const names = events.map((event) => event.event);
    expect(names.filter((name) => name === 'tool_call')).toHaveLength(2);
    expect(names).toContain('confirm');
    expect(names.filter((name) => name === 'tool_result')).toHaveLength(2);
    expect(events.filter((event) => event.event === 'reasoning').map((event) => event.data.delta).join('')).toBe('Planning');
    expect(events.filter((event) => event.event === 'content').map((event) => event.data.delta).join('')).toBe('Appended.');
    expect(events.find((event) => event.event === 'usage')!.data).toMatchObject({ promptTokens: 60, completionTokens: 10 });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).toContain('from the model');

    expect(fake.posts).toHaveLength(2);
    expectReplay(protocol, fake.posts[1]!.body);
    const first = fake.posts[0]!;
    expect(JSON.stringify(first.body)).toContain('block_append');
    const auth = protocol === 'gemini' ? first.headers['x-goog-api-key'] : protocol === 'anthropic' ? first.headers['x-api-key'] ?? first.headers.authorization : first.headers.authorization;
    expect(String(auth)).toContain(KEY);
    // The session keeps the reasoning and the provider's record; the key is nowhere in the workspace.
    const stored = await kernel.sessions.readStored(id);
    const assistant = stored.entries.find((entry) => entry.type === 'assistant')!;
    expect(assistant.reasoningContent).toBe('Planning');
    // Chat Completions has no state of its own to replay; the other three do.
    if (protocol === 'openai-chat') expect(assistant.providerData).toBeUndefined();
    else expect(assistant.providerData).toMatchObject({ protocol });
    expect(await allText(kernel.workspace.root)).not.toContain(KEY);
  });
});
