import type { ModelMessage } from '../../core/turn/model-provider.js';

/**
 * The leading system messages, each kept apart: the rules first, then the compaction summary, which
 * must stay its own message (block, part) after them and never be merged into the rules' text
 * (REFERENCE.md §6, "Injection"). System messages later in the conversation (a doom-loop warning) stay
 * in `rest`, where they are, for protocols that allow them there.
 */
export function splitLeadingSystem(messages: readonly ModelMessage[]): { system: string[]; rest: ModelMessage[] } {
  let at = 0;
  while (at < messages.length && messages[at]!.role === 'system') at++;
  return { system: messages.slice(0, at).map((message) => message.content).filter(hasText), rest: messages.slice(at) };
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

/** Where a provider's state came from: it is replayed only to the same protocol, model and server. */
export interface NativeOrigin {
  protocol: string;
  model: string;
  baseURL: string;
}

/**
 * Provider data from this very origin only: encrypted reasoning or signatures sent to another model or
 * server are refused (a 400 on every later turn) and would hand the opaque blobs to another host.
 */
export function nativeOf<T>(providerData: unknown, origin: NativeOrigin): T | undefined {
  if (typeof providerData !== 'object' || providerData === null) return undefined;
  const data = providerData as Partial<NativeOrigin>;
  return data.protocol === origin.protocol && data.model === origin.model && data.baseURL === origin.baseURL ? providerData as T : undefined;
}

/**
 * What opens a conversation whose first message is not the person's (compaction can cut there):
 * Anthropic and Gemini require the first turn to be the user's.
 */
export const CONTINUATION = '(Earlier messages were summarised above; the conversation continues.)';

/** Text worth sending: the APIs refuse empty or whitespace-only text blocks. */
export function hasText(text: string | undefined): text is string {
  return text !== undefined && text.trim() !== '';
}

/** Text for a system message where the protocol has no place for one mid-conversation. */
export function systemNote(content: string): string {
  return `<system-note>\n${content}\n</system-note>`;
}
