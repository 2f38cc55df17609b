import type { ModelMessage } from '../../core/turn/model-provider.js';

/**
 * The system prompt is the leading system messages; system messages later in the conversation (a
 * compaction summary, a doom-loop warning) stay where they are, for protocols that allow them there.
 */
export function splitLeadingSystem(messages: readonly ModelMessage[]): { system: string; rest: ModelMessage[] } {
  let at = 0;
  while (at < messages.length && messages[at]!.role === 'system') at++;
  return { system: messages.slice(0, at).map((message) => message.content).join('\n\n'), rest: messages.slice(at) };
}

/** A tool call's arguments as an object, for protocols that send objects; anything else becomes `{}`. */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

/** Provider data of one protocol only: switching provider by config must not send another's state. */
export function nativeOf<T>(providerData: unknown, protocol: string): T | undefined {
  return typeof providerData === 'object' && providerData !== null && (providerData as { protocol?: unknown }).protocol === protocol ? providerData as T : undefined;
}

/** Text for a system message where the protocol has no place for one mid-conversation. */
export function systemNote(content: string): string {
  return `<system-note>\n${content}\n</system-note>`;
}
