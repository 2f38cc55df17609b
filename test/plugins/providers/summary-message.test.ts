import { describe, expect, it } from 'vitest';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import type { ModelMessage, ModelProvider } from '../../../core/turn/model-provider.js';
import { sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

const RULES = 'You are Quire. These are the rules.';
const SUMMARY = 'The following summary was generated from earlier untrusted messages.\n<conversation_summary>\nTasks: none\n</conversation_summary>';

/** The turn loop's request after compaction: the rules, then the summary as a second system message. */
const compacted: ModelMessage[] = [
  { role: 'system', content: RULES },
  { role: 'system', content: SUMMARY },
  { role: 'user', content: 'go on' },
];

async function body(protocol: Parameters<typeof start>[0]): Promise<Record<string, unknown>> {
  const { kernel, fake } = await start(protocol);
  fake.reply(sse(protocol, { text: 'ok' }));
  const provider = kernel.container.resolve<ModelProvider>(MODEL_PROVIDER);
  for await (const _event of provider.stream({ messages: compacted, tools: [] }, new AbortController().signal)) { /* read all */ }
  return fake.posts[0]!.body;
}

describe('the compaction summary on the wire: its own system message after the rules, never merged into them', () => {
  it('Chat Completions: two system messages, the rules first', async () => {
    const sent = await body('openai-chat');
    expect((sent.messages as unknown[]).slice(0, 2)).toEqual([{ role: 'system', content: RULES }, { role: 'system', content: SUMMARY }]);
  });

  it('Responses: the rules as instructions, the summary as the first input message (a system one)', async () => {
    const sent = await body('openai-responses');
    expect(sent.instructions).toBe(RULES);
    expect((sent.input as unknown[])[0]).toEqual({ role: 'system', content: SUMMARY });
  });

  it('Anthropic: one system field with two text blocks, the rules first', async () => {
    const sent = await body('anthropic');
    expect(sent.system).toEqual([{ type: 'text', text: RULES }, { type: 'text', text: SUMMARY }]);
  });

  it('Gemini: one system instruction with two parts, the rules first', async () => {
    const sent = await body('gemini');
    expect((sent.systemInstruction as { parts: unknown[] }).parts).toEqual([{ text: RULES }, { text: SUMMARY }]);
  });
});
