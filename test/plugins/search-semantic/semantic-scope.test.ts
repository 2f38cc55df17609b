import { describe, expect, it } from 'vitest';
import { agent, reader } from '../blocks/blocks-harness.js';
import { embedded, semantic, useSemantic, type Created, type SemanticFound } from './semantic-harness.js';

const { boot, fakeServer } = useSemantic();

/** Both ways of answering a filtered query: exactly among the allowed blocks, and through the HNSW index. */
const PATHS = [{ exactBelow: 100_000 }, { exactBelow: 0 }];

describe('semantic search: filters and scopes return nothing outside them', () => {
  for (const path of PATHS) {
    it(`never returns a reader private blocks, for any filter (exactBelow ${path.exactBelow})`, async () => {
      // A local embedder: with a remote one the action has dataEgress, which a reader may not call at all.
      const { act } = await boot(undefined, { embedder: 'local', semantic: path });
      const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
      const closed = await act<Created>('notebook_create', { name: 'Closed' });
      const pub = await act<Created>('document_create', { notebook: open.id, title: 'Public', markdown: 'walnut trees in the public garden' });
      const priv = await act<Created>('document_create', { notebook: closed.id, title: 'Private walnut', markdown: 'walnut salary figures\n\n## walnut heading\n\nwalnut walnut walnut trees' });
      await embedded(act, (status) => status.vectorIndex.state === 'ready');
      const filters: Record<string, unknown>[] = [{}, { notebooks: [closed.id] }, { notebooks: [open.id, closed.id] }, { path: priv.id }, { path: `${closed.id}/${priv.id}` },
        { types: ['heading'] }, { types: ['paragraph', 'document'] }, { subtypes: ['h2'] }, { notebooks: [closed.id], types: ['heading'] }];
      for (const filter of filters) {
        const found = await semantic(act, 'walnut trees', filter, reader);
        const leaked = JSON.stringify(found);
        expect([filter, leaked.includes(closed.id) || leaked.includes(priv.id) || leaked.includes('salary') || leaked.includes('Private')]).toEqual([filter, false]);
        expect(found.results.every((hit) => hit.documentId === pub.id)).toBe(true);
      }
      // The administrator sees both.
      const all = await semantic(act, 'walnut trees');
      expect(new Set(all.results.map((hit) => hit.documentId))).toEqual(new Set([pub.id, priv.id]));
      expect((await semantic(act, 'walnut trees', {}, reader)).results.map((hit) => hit.documentId)).toContain(pub.id);
    });

    it(`searches a reader whose scope is every notebook without a filter, and still only within it (exactBelow ${path.exactBelow})`, async () => {
      const { act } = await boot(undefined, { embedder: 'local', semantic: path });
      const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
      const also = await act<Created>('notebook_create', { name: 'Also open', access: 'published' });
      await act('document_create', { notebook: open.id, title: 'A', markdown: 'hazelnut groves by the river' });
      await act('document_create', { notebook: also.id, title: 'B', markdown: 'hazelnut harvest in autumn' });
      await embedded(act, (status) => status.vectorIndex.state === 'ready');
      const everything = await semantic(act, 'hazelnut', {}, reader);
      // Through the graph, as the administrator's unfiltered search: no selection of every block first.
      expect(everything.exact).toBe(false);
      expect(everything).toEqual(await semantic(act, 'hazelnut'));
      // One notebook closed: the reader's scope is a filter again, and nothing of it comes back.
      await act('notebook_set_access', { id: also.id, access: 'private' });
      const scoped = await semantic(act, 'hazelnut', {}, reader);
      expect(scoped.results.length).toBeGreaterThan(0);
      expect(scoped.results.every((hit) => hit.notebook === open.id)).toBe(true);
    });

    it(`leaves out the notebooks a deny rule keeps the agent from (exactBelow ${path.exactBelow})`, async () => {
      const fake = await fakeServer();
      const first = await boot(fake, { semantic: path });
      const open = await first.act<Created>('notebook_create', { name: 'Open' });
      const guarded = await first.act<Created>('notebook_create', { name: 'Guarded' });
      await first.act('document_create', { notebook: open.id, title: 'O', markdown: 'pistachio open notes' });
      await first.act('document_create', { notebook: guarded.id, title: 'G', markdown: 'pistachio secret plan\n\npistachio pistachio' });
      await embedded(first.act);
      const root = first.kernel.workspace.root;
      await first.kernel.close();
      const { act, kernel } = await boot(fake, { workspace: root, semantic: path, config: { gate: { deny: [{ tool: '*', notebook: guarded.id }] } } });
      await embedded(act, (status) => status.vectorIndex.state === 'ready');
      // 'auto': the person allowed the session (the remote embedder's egress is asked for otherwise).
      const search = (filter: Record<string, unknown>) => act<SemanticFound>('search_semantic', { query: 'pistachio secret', ...filter }, agent()).catch((error: { code?: string }) => error.code);
      // Naming the hidden notebook, or a block in it, is answered as naming one that does not exist (the gate
      // refused it, ACTION_DENIED, while a made-up id was answered: the answer told the id was real).
      const hiddenBlock = (await semantic(act, 'pistachio secret plan')).results.find((hit) => hit.notebook === guarded.id)!.id;
      for (const filter of [{ notebooks: [guarded.id] }, { path: hiddenBlock }]) {
        const [hidden, madeUp] = [await search(filter), await search(JSON.parse(JSON.stringify(filter).replace(/\d{14}-[0-9a-z]{7}/, '20200101000000-abcdefg')) as Record<string, unknown>)];
        expect([filter, typeof hidden === 'object' ? hidden.results : hidden]).toEqual([filter, typeof madeUp === 'object' ? madeUp.results : madeUp]);
        expect(hidden).toMatchObject({ results: [] });
      }
      for (const filter of [{}, { types: ['paragraph'] }]) {
        const outcome = await search(filter);
        if (typeof outcome !== 'object') throw new Error(`search_semantic ${JSON.stringify(filter)}: ${outcome}`);
        expect(outcome.results.length).toBeGreaterThan(0);
        expect(outcome.results.every((hit) => hit.notebook === open.id)).toBe(true);
        expect(JSON.stringify(outcome.results)).not.toContain('secret');
      }
      expect((await semantic(act, 'pistachio secret')).results.some((hit) => hit.notebook === guarded.id)).toBe(true);
      // A grant for the open notebook still lets the agent's search of it through without asking (the
      // gate sees the notebooks a search names, less those closed to the agent).
      await kernel.grants.add({ plugin: 'search-semantic', tool: 'search', action: 'semantic', effects: ['dataEgress', 'externalCost'], notebook: open.id, createdBy: 'person:alice' });
      const prepared = (notebooks: string[]) => kernel.pipeline.prepare({ target: 'search_semantic', input: { query: 'pistachio', notebooks }, principal: agent(), sessionMode: 'confirm' }).decision;
      expect(prepared([open.id])).toMatchObject({ outcome: 'run', reason: 'grant' });
      expect(prepared([open.id, guarded.id])).toMatchObject({ outcome: 'run', reason: 'grant' });
    });

    it(`keeps to notebooks, document subtrees, types and subtypes (exactBelow ${path.exactBelow})`, async () => {
      const fake = await fakeServer();
      const { act } = await boot(fake, { semantic: path });
      const a = await act<Created>('notebook_create', { name: 'A' });
      const b = await act<Created>('notebook_create', { name: 'B' });
      const top = await act<Created>('document_create', { notebook: a.id, title: 'Top', markdown: '# cherry heading\n\ncherry paragraph in top' });
      const child = await act<Created>('document_create', { notebook: a.id, parentId: top.id, title: 'Child', markdown: '## cherry subheading\n\ncherry paragraph in child' });
      const other = await act<Created>('document_create', { notebook: b.id, title: 'Other', markdown: 'cherry paragraph elsewhere' });
      await embedded(act, (status) => status.vectorIndex.state === 'ready');
      const check = async (filter: Record<string, unknown>, allowed: (hit: SemanticFound['results'][number] & { type: string; subtype: string | null }) => boolean, expected: number) => {
        const found = await semantic(act, 'cherry paragraph', { ...filter, pageSize: 50 });
        const hits = found.results as (SemanticFound['results'][number] & { type: string; subtype: string | null })[];
        expect([filter, hits.filter((hit) => !allowed(hit)).map((hit) => hit.snippet)]).toEqual([filter, []]);
        expect([filter, hits.length]).toEqual([filter, expected]);
      };
      await check({ notebooks: [b.id] }, (hit) => hit.notebook === b.id, 2);
      // 'Top' (three characters) is too short to be embedded.
      await check({ path: top.id }, (hit) => hit.documentId === top.id || hit.documentId === child.id, 5);
      await check({ path: `${a.id}/${top.id}/${child.id}` }, (hit) => hit.documentId === child.id, 3);
      await check({ types: ['heading'] }, (hit) => hit.type === 'heading', 2);
      await check({ subtypes: ['h2'] }, (hit) => hit.subtype === 'h2', 1);
      await check({ notebooks: [a.id], types: ['paragraph'] }, (hit) => hit.notebook === a.id && hit.type === 'paragraph', 2);
      expect(other.id).toBeTruthy();
    });
  }
});

describe('semantic search: bounded work for deep pages and large selections', () => {
  it('ranks at most the nearest 1,000 blocks, and answers a selection past its exact bound from the graph, not by reading it whole', async () => {
    const { act } = await boot(undefined, { embedder: 'local', semantic: { exactBelow: 10, batchSize: 64 } });
    const notebook = await act<Created>('notebook_create', { name: 'Many' });
    // 700 blocks, more than the graph searches whole (512): 350 paragraphs and 350 headings.
    const markdown = Array.from({ length: 350 }, (_, i) => `## heading ${i} about orchards\n\nparagraph ${i} about apple trees and pears`).join('\n\n');
    await act('document_create', { notebook: notebook.id, title: 'Orchard', markdown });
    await embedded(act, (status) => status.vectorIndex.state === 'ready');
    const deep = await act('search_semantic', { query: 'apple trees', page: 11, pageSize: 100 }).catch((error: unknown) => error);
    expect(deep).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'page' } });
    // A page of 100 within half of the blocks: the graph would need more than a filtered search may ask,
    // and the selection (350) is past the exact bound (10): answered from the graph, not by reading all 350.
    const found = await semantic(act, 'apple trees', { types: ['paragraph'], pageSize: 100 });
    expect(found.exact).toBe(false);
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.results.every((hit) => hit.snippet.startsWith('paragraph'))).toBe(true);
  });
});
