import { createHash } from 'node:crypto';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { MAX_SUBSCRIPTIONS } from '../../../core/mcp/mcp-resources.js';
import { useHarness } from '../../helpers/harness.js';
import { useMcpOverHttp } from '../../helpers/mcp-client.js';
import { admin, actor, agent } from '../../plugins/blocks/blocks-harness.js';
import { isCancelled } from '../../../core/pipeline/cancel-source.js';

/** Issue 18, point 4: notes as MCP resources, with the SDK's HTTP client. */
const ADMIN = 'qk_mcp-resources-admin';
const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: createHash('sha256').update(ADMIN).digest('hex') }] };

interface Created { id: string }

const harness = useHarness();
const mcp = useMcpOverHttp();

/** A kernel with the real plugins served over loopback, and the SDK's HTTP client connected to /mcp. */
async function serve(config: KernelConfigFile = {}) {
  const kernel = await harness.boot({ realManifests: true, config: { auth, ...config, plugins: { blocks: { config: { watch: false, welcome: false } } } } });
  const server = await mcp.listen(kernel);
  const client = await mcp.connect(server.url, ADMIN);
  return { kernel, client, act: actor(kernel) };
}

describe('notes as MCP resources', () => {


  it('lists notebooks and documents page by page, offers templates, and reads them as Markdown', async () => {
    const { kernel, client, act } = await serve();
    const notebook = await act<Created>('notebook_create', { name: 'Garden' });
    const docs: Created[] = [];
    for (let i = 0; i < 120; i++) docs.push(await act<Created>('document_create', { notebook: notebook.id, title: `Bed ${i}`, markdown: `# Bed ${i}\n\ntomatoes in bed ${i}` }));
    const child = await act<Created>('document_create', { notebook: notebook.id, parentId: docs[0]!.id, title: 'Seeds', markdown: 'seed list' });
    const first = await client.listResources();
    expect(first.resources).toHaveLength(100);
    expect(first.resources[0]).toMatchObject({ uri: `quire://notebooks/${notebook.id}`, name: 'Garden' });
    // The next page comes from the listing's walk, not a new one (each page walked every notebook again).
    let listings = 0;
    const call = kernel.pipeline.call.bind(kernel.pipeline);
    kernel.pipeline.call = (request) => { if (request.target === 'document_list') listings++; return call(request); };
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.nextCursor).toBeUndefined();
    expect(listings).toBe(0);
    expect(second._meta?.['quire/truncated']).toBeUndefined();
    // A cursor of no listing kept (another kernel's, an old bare offset) walks again, from its offset.
    const again = await client.listResources({ cursor: '100' });
    expect(again.resources.map((resource) => resource.uri)).toEqual(second.resources.map((resource) => resource.uri));
    expect(listings).toBeGreaterThan(0);
    // The client's mistake is invalid params, a missing note "resource not found": they were -32603, an internal error.
    await expect(client.listResources({ cursor: 'x.1' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/invalid cursor/) });
    const uris = [...first.resources, ...second.resources].map((resource) => resource.uri);
    expect(uris).toHaveLength(1 + 120 + 1);
    expect(uris).toContain(`quire://documents/${child.id}`);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
    expect(templates).toEqual(['quire://documents/{id}', 'quire://blocks/{id}', 'quire://notebooks/{id}']);
    const read = await client.readResource({ uri: `quire://documents/${docs[5]!.id}` });
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: expect.stringContaining('tomatoes in bed 5') });
    const tree = await act<{ document: { children: { id: string; type: string }[] } }>('document_get', { id: docs[3]!.id });
    const paragraph = tree.document.children.find((block) => block.type === 'paragraph')!;
    expect((await client.readResource({ uri: `quire://blocks/${paragraph.id}` })).contents[0]).toMatchObject({ text: 'tomatoes in bed 3\n' });
    const listing = await client.readResource({ uri: `quire://notebooks/${notebook.id}` });
    expect((listing.contents[0] as { text: string }).text).toContain(`[Bed 7](quire://documents/${docs[7]!.id})`);
    await expect(client.readResource({ uri: 'quire://documents/20260101000000-nothing' })).rejects.toMatchObject({ code: -32002, message: expect.stringMatching(/No document/), data: { code: 'NOT_FOUND' } });
    await expect(client.readResource({ uri: 'https://example.com/' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/not a Quire resource/) });
  });

  it('walks again for the next page once a notebook was marked local-only, or closed to the agent, since the listing began', async () => {
    for (const setting of [{ egress: 'local-only' }, { agent: 'none' }]) {
      const { client, act } = await serve();
      const notebook = await act<Created>('notebook_create', { name: 'Health' });
      for (let i = 0; i < 110; i++) await act('document_create', { notebook: notebook.id, title: `Visit ${i}` });
      const first = await client.listResources();
      expect(first.nextCursor).toBeDefined();
      await act('notebook_set_privacy', { id: notebook.id, ...setting });
      const second = await client.listResources({ cursor: first.nextCursor! });
      // Walked again: its documents' titles are not listed (a cursor past what is left gives none).
      expect(JSON.stringify(second.resources), JSON.stringify(setting)).not.toContain('Visit');
    }
  });

  it('walks again for the next page once a document was moved into a local-only notebook since the listing began', async () => {
    const { client, act } = await serve();
    const open = await act<Created>('notebook_create', { name: 'Open' });
    const kept = await act<Created>('notebook_create', { name: 'Kept' });
    await act('notebook_set_privacy', { id: kept.id, egress: 'local-only' });
    const made: string[] = [];
    for (let i = 0; i < 110; i++) made.push((await act<Created>('document_create', { notebook: open.id, title: `Visit ${i}` })).id);
    const first = await client.listResources();
    expect(first.nextCursor).toBeDefined();
    const later = [...made].reverse().find((id) => !JSON.stringify(first.resources).includes(id))!;
    await act('document_move', { id: later, notebook: kept.id });
    // Writes elsewhere keep the listing (no walk per page for a busy workspace); this one does not.
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(JSON.stringify(second.resources)).not.toContain(later);
    // A removal, and a write inside the withheld notebook, move nothing into it: the pages kept are
    // served, not walked again (every such write forced a walk, and three made the listing fail).
    const third = await client.listResources();
    const shownLater = made.filter((id) => id !== later).find((id) => !JSON.stringify(third.resources).includes(id))!;
    await act('document_remove', { id: shownLater });
    await act('block_append', { parentId: later, markdown: 'written where the client cannot see' });
    const fourth = await client.listResources({ cursor: third.nextCursor! });
    expect(JSON.stringify(fourth.resources)).toContain(shownLater);
  });

  it('stops walking the notes for a listing its client cancelled', async () => {
    const { kernel, client, act } = await serve();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    for (let i = 0; i < 30; i++) {
      const doc = await act<Created>('document_create', { notebook: notebook.id, title: `D${i}` });
      await act('document_create', { notebook: notebook.id, parentId: doc.id, title: `C${i}` });
    }
    const cancel = new AbortController();
    let listings = 0;
    let afterCancel = 0;
    const call = kernel.pipeline.call.bind(kernel.pipeline);
    kernel.pipeline.call = async (request) => {
      if (request.target !== 'document_list') return call(request);
      // Started after the server knew of the cancel (counted by the server's signal, not the client's: the
      // notice takes a moment to arrive, longer under load).
      if (request.signal && isCancelled(request.signal)) afterCancel++;
      // Each listing takes a while, as in a large workspace; the client gives up after the third.
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (++listings === 3) cancel.abort();
      return call(request);
    };
    await expect(client.listResources(undefined, { signal: cancel.signal })).rejects.toThrow();
    // Waited for (the walk's end), not timed: 31 listings in all.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(afterCancel).toBeLessThanOrEqual(1);
    expect(listings).toBeLessThan(31);
  });

  it('lets one session watch at most 1,000 resources', async () => {
    const { client, act } = await serve();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Many', markdown: Array.from({ length: MAX_SUBSCRIPTIONS + 5 }, (_, i) => `paragraph ${i}`).join('\n\n') });
    const blocks = (await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc.id })).document.children.map((block) => `quire://blocks/${block.id}`);
    for (const uri of blocks.slice(0, MAX_SUBSCRIPTIONS - 5)) await client.subscribeResource({ uri });
    // The last ten asked at once (the server runs them together): no more than the limit are taken.
    const outcomes = await Promise.allSettled(blocks.slice(MAX_SUBSCRIPTIONS - 5, MAX_SUBSCRIPTIONS + 5).map((uri) => client.subscribeResource({ uri })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5);
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(String((outcome.reason as Error).message)).toMatch(/at most 1000 resources/);
    const refusedOne = blocks.slice(MAX_SUBSCRIPTIONS - 5, MAX_SUBSCRIPTIONS + 5).find((_, i) => outcomes[i]!.status === 'rejected')!;
    blocks[MAX_SUBSCRIPTIONS] = refusedOne;
    // One watched already may be asked again; one let go makes room.
    await client.subscribeResource({ uri: blocks[0]! });
    await client.unsubscribeResource({ uri: blocks[1]! });
    await client.subscribeResource({ uri: blocks[MAX_SUBSCRIPTIONS]! });
  });

  it('tells a subscriber when its document changes, whoever changed it, and not after unsubscribing', async () => {
    const { kernel, client, act } = await serve();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Watched', markdown: 'first' });
    const other = await act<Created>('document_create', { notebook: notebook.id, title: 'Other', markdown: 'other' });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => { updated.push(notification.params.uri); });
    const uri = `quire://documents/${doc.id}`;
    await client.subscribeResource({ uri });
    await act('block_append', { parentId: other.id, markdown: 'not watched' });
    await kernel.pipeline.call({ target: 'block_append', input: { parentId: doc.id, markdown: 'by the agent' }, principal: agent(), sessionMode: 'auto' });
    await waitFor(() => updated.includes(uri));
    expect(updated.every((seen) => seen === uri)).toBe(true);
    await client.unsubscribeResource({ uri });
    const before = updated.length;
    await act('block_append', { parentId: doc.id, markdown: 'after' }, admin);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(updated).toHaveLength(before);
    // A document nobody may see cannot be watched.
    await expect(client.subscribeResource({ uri: 'quire://documents/20260101000000-nothing' })).rejects.toThrow(/No document/);
    // Nor one whose notebook is closed to the client after it subscribed: told once more (it is gone
    // for the client), then no more news of it.
    await client.subscribeResource({ uri });
    await act('notebook_set_privacy', { id: notebook.id, agent: 'none' });
    const closedAt = updated.length;
    await act('block_append', { parentId: doc.id, markdown: 'after closing' }, admin);
    await waitFor(() => updated.length > closedAt);
    const last = updated.length;
    await act('block_append', { parentId: doc.id, markdown: 'and again' }, admin);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(updated).toHaveLength(last);
  });
});

async function waitFor(check: () => boolean, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('waited in vain');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('MCP prompts', () => {

  it('offers the built-in prompts and every skill, with arguments, the notes embedded as resources', async () => {
    const { client, act } = await serve();
    await act('skill_save', { name: 'meeting-notes', content: '---\nname: meeting-notes\ndescription: How to write meeting notes.\n---\nStart with the decisions.\n' });
    const notebook = await act<Created>('notebook_create', { name: 'Work' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Plan', markdown: 'We decided to ship on Friday.' });
    await act('dailynote_append', { notebook: notebook.id, date: '2026-12-01', markdown: '- [ ] call the printer' });
    const prompts = (await client.listPrompts()).prompts;
    expect(prompts.map((prompt) => prompt.name)).toEqual(['summarize_document', 'daily_review', 'skill_meeting-notes']);
    expect(prompts[0]!.arguments).toEqual([expect.objectContaining({ name: 'id', required: true }), expect.objectContaining({ name: 'length' })]);
    const summary = await client.getPrompt({ name: 'summarize_document', arguments: { id: doc.id } });
    expect(summary.messages[0]!.content).toMatchObject({ type: 'resource', resource: { uri: `quire://documents/${doc.id}`, text: expect.stringContaining('ship on Friday') } });
    const review = await client.getPrompt({ name: 'daily_review', arguments: { notebook: notebook.id, date: '2026-12-01' } });
    expect(JSON.stringify(review.messages)).toContain('call the printer');
    const empty = await client.getPrompt({ name: 'daily_review', arguments: { notebook: notebook.id, date: '2026-11-01' } });
    expect(JSON.stringify(empty.messages)).toContain('no daily note for 2026-11-01');
    const skill = await client.getPrompt({ name: 'skill_meeting-notes', arguments: { request: 'minutes of today' } });
    expect(skill.messages[0]!.content).toMatchObject({ type: 'text', text: expect.stringMatching(/Start with the decisions\.[\s\S]*Request: minutes of today/) });
    await expect(client.getPrompt({ name: 'summarize_document', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/needs the argument 'id'/) });
    await expect(client.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/no prompt named/) });
    await expect(client.getPrompt({ name: 'skill_nope' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/no prompt named 'skill_nope'/) });
    // A note it names that is not there is not found, as a resource's is (it was invalid params).
    await expect(client.getPrompt({ name: 'summarize_document', arguments: { id: '20200101000000-abcdefg' } })).rejects.toMatchObject({ code: -32002 });
  });
});

describe('notebook privacy for MCP clients (they are agents too)', () => {

  it('hides agent: none notebooks and holds back local-only notes from tools, resources and prompts, unless mcp.sendLocalOnly', async () => {
    for (const sendLocalOnly of [false, true]) {
      const { client, act } = await serve({ mcp: { sendLocalOnly } });
      const closed = await act<Created>('notebook_create', { name: 'Closed' });
      const local = await act<Created>('notebook_create', { name: 'Local' });
      const closedDoc = await act<Created>('document_create', { notebook: closed.id, title: 'Secret', markdown: 'zebraquartz' });
      const localDoc = await act<Created>('document_create', { notebook: local.id, title: 'Health', markdown: 'quokkaplinth' });
      await act('notebook_set_privacy', { id: closed.id, agent: 'none' });
      await act('notebook_set_privacy', { id: local.id, egress: 'local-only' });
      const closedRead = await client.callTool({ name: 'document_get_markdown', arguments: { id: closedDoc.id } });
      expect(closedRead).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('NOT_FOUND') }] });
      const names = JSON.stringify((await client.callTool({ name: 'notebook_list', arguments: {} })).structuredContent);
      expect(names).not.toContain('Closed');
      // The tools are listed first, so that the SDK client checks results against their output schemas.
      await client.listTools();
      const localCall = await client.callTool({ name: 'document_get_markdown', arguments: { id: localDoc.id } });
      const localRead = JSON.stringify(localCall);
      expect(localCall.isError === true).toBe(!sendLocalOnly);
      const resource = client.readResource({ uri: `quire://documents/${localDoc.id}` });
      // A search whose only hit is in the local-only notebook, and one for a word that is nowhere.
      const found = async (query: string) => JSON.stringify((await client.callTool({ name: 'search_fulltext', arguments: { query } })).structuredContent);
      if (sendLocalOnly) {
        expect(localRead).toContain('quokkaplinth');
        expect(JSON.stringify(await resource)).toContain('quokkaplinth');
        expect(await found('quokkaplinth')).toContain(localDoc.id);
      } else {
        // Left out as a closed notebook is: read as if it were not there (it was answered "withheld").
        expect(localRead).not.toContain('quokkaplinth');
        expect(localCall).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('NOT_FOUND') }] });
        await expect(resource).rejects.toMatchObject({ code: -32002, data: { code: 'NOT_FOUND' } });
        // A search cannot tell a word in local-only notes from one nowhere (the whole answer was withheld
        // for the first, empty for the second), and a search touching the notebook is not lost.
        const withoutQuery = (answer: string): string => answer.replace(/"query":"[^"]*"/, '"query":""');
        expect(withoutQuery(await found('quokkaplinth'))).toBe(withoutQuery(await found('nowherezzqq')));
        await act('block_append', { parentId: localDoc.id, markdown: 'pangolin in private' });
        const open = await act<Created>('notebook_create', { name: 'Open' });
        await act('document_create', { notebook: open.id, title: 'Zoo', markdown: 'pangolin in public' });
        const both = await found('pangolin');
        expect([both.includes('in public'), both.includes('in private'), both.includes('withheld')]).toEqual([true, false, false]);
        // With only the local-only notebook closed: SQL cannot leave it out, so a query is refused saying why
        // (it was refused naming deny rules and agent: none); its schema, holding no notes, is answered.
        await act('notebook_set_privacy', { id: closed.id, agent: 'write' });
        const query = await client.callTool({ name: 'sql_query', arguments: { sql: 'select 1' } });
        expect(query).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('local-only') }] });
        expect((await client.callTool({ name: 'sql_schema', arguments: {} })).isError).not.toBe(true);
        await act('notebook_set_privacy', { id: closed.id, agent: 'none' });
        // A write into it is done, and says so: an error that looked like a failure was retried, writing twice.
        const appended = JSON.stringify(await client.callTool({ name: 'block_append', arguments: { parentId: localDoc.id, markdown: 'once only' } }));
        expect(appended).toContain('do not call it again');
        expect((await act<{ markdown: string }>('document_get_markdown', { id: localDoc.id })).markdown.match(/once only/g)).toHaveLength(1);
        // A write that fails on a stale expectedUpdated says CONFLICT, not when the block was last written.
        const [block] = (await act<{ document: { children: { id: string; updated: string }[] } }>('document_get', { id: localDoc.id })).document.children;
        const updated = (await act<{ block: { updated?: string; attrs?: { updated?: string } } }>('block_get', { id: block!.id }));
        const stamp = JSON.stringify(updated).match(/"updated":"([^"]+)"/)![1]!;
        const stale = await client.callTool({ name: 'block_update', arguments: { id: block!.id, markdown: 'changed', expectedUpdated: '2000-01-01T00:00:00.000Z' } });
        expect(stale).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('CONFLICT') }] });
        expect(JSON.stringify(stale)).not.toContain(stamp);
        // The listing leaves the local-only notebook out, as a closed one (it named the notebook, not its documents).
        const uris = (await client.listResources()).resources.map((entry) => entry.uri);
        expect(uris).not.toContain(`quire://notebooks/${local.id}`);
        expect(uris).not.toContain(`quire://documents/${localDoc.id}`);
        expect(uris.join(' ')).not.toContain(closed.id);
      }
    }
  });
});
