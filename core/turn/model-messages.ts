import type { SessionEntry } from '../session/session-types.js';
import type { ModelMessage } from './model-provider.js';

/** The model sees user and assistant entries only; each tool call's result follows its assistant message. */
export function toModelMessages(entries: readonly SessionEntry[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const entry of entries) {
    if (entry.type === 'user') messages.push({ role: 'user', content: entry.content ?? '' });
    if (entry.type !== 'assistant') continue;
    const calls = entry.toolCalls ?? [];
    messages.push({
      role: 'assistant',
      content: entry.content ?? '',
      ...(calls.length > 0 ? { toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}), ...(call.providerData !== undefined ? { providerData: call.providerData } : {}) })) } : {}),
      ...(entry.providerData !== undefined ? { providerData: entry.providerData } : {}),
    });
    for (const call of calls) messages.push({ role: 'tool', toolCallId: call.id, content: call.result ?? '' });
  }
  return messages;
}
