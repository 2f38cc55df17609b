import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../core/session/json-values.js';
import type { SessionEntry } from '../../../core/session/session-types.js';
import { estimateContext, estimateRequest } from '../../../core/turn/compaction-tokens.js';
import { toModelMessages } from '../../../core/turn/model-messages.js';
import type { ModelMessage, ModelToolSpec } from '../../../core/turn/model-provider.js';

const user = (id: string, content = `question ${id}: what about the notes on this topic?`): SessionEntry => ({ id, type: 'user', content });
const assistant = (id: string, result = `result of ${id}`): SessionEntry => ({
  id, type: 'assistant', content: `an answer for ${id}, citing a block`,
  toolCalls: [{ id: `c${id}`, name: 'search_fulltext', arguments: { query: id }, state: 'finished', result }],
});
/** A stored history: frozen, as the session store hands it out. */
const history = (n: number, prefix = 'h'): SessionEntry[] => deepFreeze(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`${prefix}${i}`) : assistant(`${prefix}${i}`))));

/** The messages as the model sees them, built the plain way (the reference for the cached one). */
function reference(entries: readonly SessionEntry[]): unknown[] {
  return entries.flatMap((entry) => entry.type === 'user' ? [{ role: 'user', content: entry.content }]
    : entry.type !== 'assistant' ? []
      : [{ role: 'assistant', content: entry.content, toolCalls: (entry.toolCalls ?? []).map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) })) },
        // A stored call without its notebooks (kept since issue 17) counts as holding every notebook.
        ...(entry.toolCalls ?? []).map((call) => ({ role: 'tool', toolCallId: call.id, content: call.result, notebooks: 'all' }))]);
}

const head: ModelMessage[] = [{ role: 'system', content: 'the rules' }];
const tools: ModelToolSpec[] = [{ name: 'search_fulltext', description: 'searches', inputSchema: { type: 'object' } }];

describe('model messages and token estimates of a growing history', () => {
  it('gives the messages of the stored entries, the same objects turn after turn, whatever history came before', () => {
    const entries = history(40);
    const first = toModelMessages(entries);
    expect(first).toEqual(reference(entries));
    const longer = deepFreeze([...entries, user('next'), assistant('next')]);
    const second = toModelMessages(longer);
    expect(second).toEqual(reference(longer));
    expect(second.slice(0, first.length).every((message, i) => message === first[i])).toBe(true);
    // A regenerated turn cuts the history; an edited entry is a new object, so its messages are new.
    const cut = longer.slice(0, 21);
    expect(toModelMessages(cut)).toEqual(reference(cut));
    const edited = deepFreeze([...longer.slice(0, 5), user('h5', 'edited question'), ...longer.slice(6)]);
    expect(toModelMessages(edited)).toEqual(reference(edited));
    // Another session's history in between changes nothing.
    expect(toModelMessages(history(10, 'other'))).toEqual(reference(history(10, 'other')));
    expect(toModelMessages(longer)).toEqual(reference(longer));
  });

  it('reads entries that are not frozen afresh every time: they may have changed', () => {
    const entries = [user('m0'), assistant('m1')];
    expect(toModelMessages(entries)).toEqual(reference(entries));
    entries[0]!.content = 'changed in place';
    entries[1]!.toolCalls![0]!.result = 'another result';
    expect(toModelMessages(entries)).toEqual(reference(entries));
  });

  it('estimates a history round after round with the same count as estimating each request whole', () => {
    const messages = toModelMessages(history(60, 'e'));
    const whole = (list: readonly ModelMessage[]) => estimateRequest([...head, ...list], tools);
    expect(estimateContext(head, messages, tools)).toBe(whole(messages));
    // A round adds the model's call and its result (frozen, as the turn loop adds them) and a warning.
    messages.push(deepFreeze({ role: 'assistant', content: 'calling', toolCalls: [{ id: 'r1', name: 'search_fulltext', arguments: '{"query":"more"}' }] }));
    messages.push(deepFreeze({ role: 'tool', toolCallId: 'r1', content: 'a long result '.repeat(30) }));
    expect(estimateContext(head, messages, tools)).toBe(whole(messages));
    // A message that is not frozen is counted as it is now.
    const loose: ModelMessage = { role: 'system', content: 'short' };
    messages.push(loose);
    expect(estimateContext(head, messages, tools)).toBe(whole(messages));
    loose.content = 'a much longer warning than before, with many more words in it';
    expect(estimateContext(head, messages, tools)).toBe(whole(messages));
    // A history that differs in the middle, and a shorter one, are counted right too.
    const other = [...messages.slice(0, 10), deepFreeze({ role: 'user' as const, content: 'a different question' }), ...messages.slice(11)];
    expect(estimateContext(head, other, tools)).toBe(whole(other));
    expect(estimateContext(head, messages.slice(0, 7), tools)).toBe(whole(messages.slice(0, 7)));
    expect(estimateContext(head, messages, tools)).toBe(whole(messages));
  });
});
