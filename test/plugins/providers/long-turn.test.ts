import { describe, expect, it } from 'vitest';
import { PROTOCOLS, sse, useProviderKernel } from './provider-harness.js';

const { start } = useProviderKernel();

interface Created { id: string }

const ROUNDS = 12;

/**
 * A long turn (a dozen large documents read, one a round) on a model whose context holds four of them:
 * the turn's own history is summarised inside the turn, through each protocol's real SDK. On the three
 * protocols with native state, every answer carried that state whether or not it held a signature, and
 * a turn holding native state is never summarised inside: the turn stopped at its fourth round with
 * COMPACTION_FAILED. Only signed state (thinking, thought signatures, encrypted reasoning) is kept now.
 */
describe.each(PROTOCOLS)('a long turn on %s', (protocol) => {
  it('is summarised inside the turn and finishes when its answers hold no signed state', async () => {
    const { act, fake, session, turn } = await start(protocol, { model: { contextLimit: 32_000 } });
    const notebook = await act<Created>('notebook_create', { name: 'Reading' });
    const docs: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const paragraphs = Array.from({ length: 80 }, (_, j) => `Document ${i}, paragraph ${j}: ${'the quick brown fox jumps over the lazy dog '.repeat(10)}`);
      docs.push((await act<Created>('document_create', { notebook: notebook.id, title: `Doc ${i}`, markdown: paragraphs.join('\n\n') })).id);
    }
    let round = 0;
    let summaries = 0;
    fake.responder = (body) => {
      if (/<(new_history_json|history_fragment)>/.test(JSON.stringify(body))) {
        summaries++;
        return sse(protocol, { text: `Read documents so far; summary ${summaries}.`, usage: { input: 100, output: 10 } });
      }
      round++;
      return round <= ROUNDS
        ? sse(protocol, { calls: [{ id: `call_${round}`, name: 'document_get_markdown', args: { id: docs[round - 1] } }], usage: { input: 100, output: 10 } })
        : sse(protocol, { text: 'All twelve read.', usage: { input: 100, output: 10 } });
    };
    const id = await session();
    const { events } = await turn(id, 'read every document and summarise them');
    expect(events.filter((event) => event.event === 'error').map((event) => event.data)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(round).toBe(ROUNDS + 1);
    expect(summaries).toBeGreaterThan(0);
  });
});
