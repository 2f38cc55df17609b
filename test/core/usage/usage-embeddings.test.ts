import { describe, expect, it } from 'vitest';
import { agent } from '../../plugins/blocks/blocks-harness.js';
import { embedded, useSemantic, type Created } from '../../plugins/search-semantic/semantic-harness.js';

/** Issue 17, point 5: embedding requests go to the ledger too, an agent's under its session and turn. */
const { boot, fakeServer } = useSemantic();

describe('the usage ledger and embedders', () => {
  it('records every call to a billed embedder: the background indexer\'s without a session, an agent\'s search under its session and turn', async () => {
    const fake = await fakeServer();
    const { kernel, act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Garden', markdown: 'tomatoes need warm soil\n\nbasil grows beside them' });
    await embedded(act);
    const outcome = await kernel.pipeline.call({ target: 'search_semantic', input: { query: 'warm soil' }, principal: agent('s-usage', 't-usage'), sessionMode: 'auto' });
    expect(outcome.status).toBe('ok');
    const bySession = kernel.usage.report('session');
    const agentRow = bySession.find((row) => row.key === 's-usage');
    expect(agentRow).toMatchObject({ requests: 1, output: 0 });
    expect(agentRow!.input).toBeGreaterThan(0);
    expect(bySession.find((row) => row.key === '(none)')!.requests).toBeGreaterThan(0);
    expect(kernel.usage.total({ sessionId: 's-usage', turnId: 't-usage' }).requests).toBe(1);
    // No price for the embedding model: unknown, never free.
    expect(agentRow!.cost).toBeNull();
  });
});
