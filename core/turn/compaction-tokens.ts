import { createRequire } from 'node:module';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { BpeCounter } from './bpe-counter.js';
import type { ModelMessage, ModelToolSpec } from './model-provider.js';
import { PrefixMemo } from './prefix-memo.js';

/**
 * Token estimates for the context budget (REFERENCE.md §6): cl100k_base (js-tiktoken's ranks, counted by
 * BpeCounter), with the per-message and per-tool overheads the providers add. Counts are remembered per frozen message (the
 * stored history) and per text (the rest), and scaled by how far the provider's real count differed last time.
 */
let counter: BpeCounter | undefined;
/**
 * The cl100k_base ranks, read on the first count: the package's main entry parses every encoding's
 * ranks (5.6 MB of JavaScript, 40 ms) at import, which each start of the kernel paid.
 */
const loadRanks = (): TiktokenBPE => createRequire(import.meta.url)('js-tiktoken/ranks/cl100k_base') as TiktokenBPE;
const remembered = new Map<string, number>();
const REMEMBERED_LIMIT = 20_000;

/**
 * Tokens in `text`. `remember: false` for text seen once (summary requests, prefixes tried while
 * splitting): kept, it would only push out the history's messages and hold large strings.
 */
export function countText(text: string, remember = true): number {
  if (text.length === 0) return 0;
  const known = remembered.get(text);
  if (known !== undefined) return known;
  counter ??= new BpeCounter(loadRanks());
  // Special-token text ("<|endoftext|>") in a note or a message is counted as the plain text it is (by
  // default js-tiktoken's encode throws on it, which failed the turn).
  const count = counter.count(text);
  if (!remember) return count;
  if (remembered.size >= REMEMBERED_LIMIT) remembered.delete(remembered.keys().next().value!);
  remembered.set(text, count);
  return count;
}

/**
 * Estimates of frozen messages, by identity: the history's messages are frozen and the same objects in
 * every round and turn (model-messages.ts), so each is counted once, not once per round (texts are
 * still remembered too: the same text in another message, or after a reload, is not counted again).
 */
const byMessage = new WeakMap<ModelMessage, number>();

/** Tokens of one message with its overheads (+4 per message, +7 per tool call). */
export function estimateMessage(message: ModelMessage, remember = true): number {
  const frozen = remember && Object.isFrozen(message) && (message.toolCalls === undefined || Object.isFrozen(message.toolCalls));
  if (frozen) {
    const known = byMessage.get(message);
    if (known !== undefined) return known;
  }
  let total = 4 + countText(message.content, remember);
  for (const call of message.toolCalls ?? []) total += 7 + countText(call.name) + countText(call.arguments, remember);
  if (frozen) byMessage.set(message, total);
  return total;
}

export function estimateRequest(messages: readonly ModelMessage[], tools: readonly ModelToolSpec[], remember = true): number {
  let total = 3;
  for (const message of messages) total += estimateMessage(message, remember);
  for (const tool of tools) total += 10 + countText(`${tool.name} ${tool.description} ${JSON.stringify(tool.inputSchema)}`);
  return total;
}

/** The histories estimated lately, with running totals: a round's history is the last one and a few messages more. */
const histories = new PrefixMemo<ModelMessage>();

/**
 * Tokens of a history's messages (without the request's priming): only the messages after the part it
 * shares with a history estimated lately are looked at, so a round costs what it added, not the session.
 */
export function estimateHistory(messages: readonly ModelMessage[]): number {
  const followed = histories.follow(messages);
  // marks[i]: the tokens of the messages up to i.
  const { marks } = followed.lineage;
  let total = followed.shared > 0 ? marks[followed.shared - 1]! : 0;
  for (let i = followed.shared; i < messages.length; i++) {
    total += estimateMessage(messages[i]!);
    marks.push(total);
  }
  histories.extend(followed, messages);
  return total;
}

/** The same as estimateRequest([...head, ...history], tools), with the history estimated incrementally. */
export function estimateContext(head: readonly ModelMessage[], history: readonly ModelMessage[], tools: readonly ModelToolSpec[]): number {
  return estimateRequest(head, tools) + estimateHistory(history);
}

/**
 * How many code points of `points` (a text as code points) fit in `limit` tokens, found by binary search
 * on prefixes; a text is never cut inside a character. Always a prefix that fits, not always the longest.
 */
export function fittingPrefix(points: readonly string[], limit: number): number {
  let low = 0;
  // A token rarely spans more than a few characters: searching further would only tokenize more text.
  let high = Math.min(points.length, limit * 16);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (countText(points.slice(0, middle).join(''), false) <= limit) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The input budget: the context minus room for the answer and a safety margin (REFERENCE.md §6). */
export function inputBudget(contextLimit: number, maxOutputTokens: number | undefined): number {
  const reserve = maxOutputTokens ?? Math.min(4096, Math.max(512, Math.floor(contextLimit / 8)));
  const safety = Math.min(4096, Math.max(256, Math.floor(contextLimit / 100)));
  return Math.max(0, contextLimit - reserve - safety);
}
