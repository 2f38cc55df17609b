import { deepFreeze } from '../session/json-values.js';
import type { SessionEntry, ToolCallRecord } from '../session/session-types.js';
import type { ModelMessage } from './model-provider.js';
import { PrefixMemo } from './prefix-memo.js';

/**
 * The messages of each stored entry, by entry. The store's entries are frozen and shared between turns
 * (journaled-documents.ts), so an entry's messages are built once, and are the same (frozen) objects every
 * turn: their token estimates and digests are remembered by identity (compaction-tokens.ts, compaction.ts).
 * A history seen lately is not gone through again: only the entries after what it shares with it are.
 */
const byEntry = new WeakMap<SessionEntry, readonly ModelMessage[]>();
const NONE: readonly ModelMessage[] = Object.freeze([]);

/** The last histories turned into messages (marks: how many messages the entries up to each one make). */
const histories = new PrefixMemo<SessionEntry, ModelMessage>((ends, shared) => shared > 0 ? ends[shared - 1]! : 0);

/** The model sees user and assistant entries only; each tool call's result follows its assistant message. */
export function toModelMessages(entries: readonly SessionEntry[]): ModelMessage[] {
  const followed = histories.follow(entries);
  const { out, marks } = followed.lineage;
  for (let i = followed.shared; i < entries.length; i++) {
    for (const message of messagesOf(entries[i]!)) out.push(message);
    marks.push(out.length);
  }
  histories.extend(followed, entries);
  // A copy: the caller adds the turn's messages to it.
  return out.slice();
}

function messagesOf(entry: SessionEntry): readonly ModelMessage[] {
  let own = byEntry.get(entry);
  if (own === undefined) {
    own = entryMessages(entry);
    // Only a frozen entry cannot change under the messages made from it.
    if (Object.isFrozen(entry)) byEntry.set(entry, deepFreeze(own));
  }
  return own;
}

function entryMessages(entry: SessionEntry): readonly ModelMessage[] {
  if (entry.type === 'user') return [{ role: 'user', content: entry.content ?? '' }];
  if (entry.type !== 'assistant') return NONE;
  const calls = entry.toolCalls ?? [];
  const messages: ModelMessage[] = [{
    role: 'assistant',
    content: entry.content ?? '',
    ...(calls.length > 0 ? { toolCalls: calls.map((call) => ({ id: call.id, name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}), ...(call.providerData !== undefined ? { providerData: call.providerData } : {}) })) } : {}),
    ...(entry.providerData !== undefined ? { providerData: entry.providerData } : {}),
    ...answerNotebooks(entry.notebooks),
  }];
  for (const call of calls) messages.push(toolMessage(call));
  return messages;
}

/**
 * An answer's notebooks (whose notes its model had been shown, egress-filter.ts `notebooksSeen`). An
 * answer stored before they were recorded has none: counting it as holding every notebook would
 * withhold every earlier answer from a model off this machine as soon as any notebook is local-only.
 */
function answerNotebooks(value: unknown): { notebooks?: readonly string[] | 'all' } {
  if (value === 'all') return { notebooks: 'all' };
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string') ? { notebooks: value as string[] } : {};
}

/** A stored call's notebooks; a record from before they were kept counts as holding every notebook. */
export function notebooksOfRecord(value: unknown): readonly string[] | 'all' {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value as string[] : 'all';
}

/** A call's result as the model is given it, with whose notes it holds and whether the person released it. */
export function toolMessage(call: ToolCallRecord): ModelMessage {
  return { role: 'tool', toolCallId: call.id, content: call.result ?? '', notebooks: notebooksOfRecord(call.notebooks), ...(call.released === true ? { released: true } : {}) };
}
