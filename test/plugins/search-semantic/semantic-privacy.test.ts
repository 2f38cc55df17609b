import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { Kernel } from '../../../core/kernel.js';
import { rawRequest } from '../../helpers/http-client.js';
import { agent, reader, type Act } from '../blocks/blocks-harness.js';
import { embedded, semantic, until, useSemantic, type Created, type Status } from './semantic-harness.js';
import { connectMcp } from '../../helpers/mcp-client.js';

const { boot, fakeServer } = useSemantic();

async function setEgress(kernel: Kernel, notebook: string, localOnly: boolean): Promise<void> {
  const file = join(kernel.workspace.dataDir, notebook, '.notebook.json');
  const conf = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  if (localOnly) conf.egress = 'local-only';
  else delete conf.egress;
  await writeFile(file, JSON.stringify(conf));
}

/** Two notebooks written with no embedder configured: 'Open' and 'Kept' (local-only), each with a document. */
async function twoNotebooks() {
  const first = await boot(undefined, { embedder: 'none' });
  const open = await first.act<Created>('notebook_create', { name: 'Open' });
  const kept = await first.act<Created>('notebook_create', { name: 'Kept' });
  const openDoc = await first.act<Created>('document_create', { notebook: open.id, title: 'Open notes', markdown: 'apricot jam recipe for everyone\n\nmovable apricot paragraph here' });
  const keptDoc = await first.act<Created>('document_create', { notebook: kept.id, title: 'Kept diary', markdown: 'apricot confession kept at home\n\nsecond kept sentence stays here' });
  await setEgress(first.kernel, kept.id, true);
  const root = first.kernel.workspace.root;
  await first.kernel.close();
  return { root, open: open.id, kept: kept.id, openDoc: openDoc.id, keptDoc: keptDoc.id };
}

const KEPT_TEXTS = ['apricot confession kept at home', 'second kept sentence stays here', 'Kept diary'];
const neverSent = (texts: readonly string[]) => texts.filter((text) => KEPT_TEXTS.some((kept) => text.includes(kept)) || text.includes('SECRET'));

async function status(act: Act): Promise<Status> {
  return act<Status>('embeddings_status', {});
}

describe('semantic search: local-only notebooks never reach a remote embedder', () => {
  it('keeps them from the remote embedder, counts them as ignored, and says answers are incomplete', async () => {
    const { root, kept } = await twoNotebooks();
    const fake = await fakeServer();
    const { act, kernel } = await boot(fake, { workspace: root });
    const done = await embedded(act);
    expect(done.ignored['local-only']).toBe(3);
    expect(done.indexed).toBe(3);
    expect(neverSent(fake.texts)).toEqual([]);
    const found = await semantic(act, 'apricot confession');
    expect(found.results.some((hit) => hit.notebook === kept)).toBe(false);
    expect(found.complete).toBe(false);
    expect(found.note).toContain('3 blocks of local-only notebooks are not sent to this remote embedder');
    // Edits in the local-only notebook are not sent either.
    const keptDoc = (await act<{ results: { id: string; notebook: string }[] }>('search_fulltext', { query: 'confession' })).results[0]!;
    await act('block_update', { id: keptDoc.id, markdown: 'apricot confession SECRET rewritten' });
    await act('document_create', { notebook: kept, title: 'Kept two', markdown: 'another SECRET page entirely' });
    await until('the new blocks counted as ignored', async () => (await status(act)).ignored['local-only'] === 5);
    expect(neverSent(fake.texts)).toEqual([]);
    expect(kernel).toBeTruthy();
  });

  it('tells an agent under a deny rule that answers are incomplete, without the counts (they cover the notebooks it may not see)', async () => {
    const { root, kept } = await twoNotebooks();
    const fake = await fakeServer();
    const { act } = await boot(fake, { workspace: root, config: { gate: { deny: [{ tool: '*', notebook: kept }] } } });
    await embedded(act);
    expect((await semantic(act, 'apricot')).note).toContain('3 blocks of local-only notebooks');
    // 'auto': the person allowed the session (the remote embedder's egress is asked for otherwise).
    const scoped = await act<{ complete: boolean; note?: string }>('search_semantic', { query: 'apricot' }, agent());
    expect(scoped.complete).toBe(false);
    expect(scoped.note).toBeDefined();
    expect(scoped.note).not.toMatch(/\d/);
    // Nor through the status: its counts cover the notebook it may not see.
    const status = await act<Record<string, unknown>>('embeddings_status', {}, agent());
    expect(status.enabled).toBe(true);
    expect(status).not.toHaveProperty('indexed');
    expect(status).not.toHaveProperty('ignored');
  });

  it('drops the remote vectors of a document moved into a local-only notebook, and sends none of its later edits', async () => {
    const { root, open, kept, openDoc } = await twoNotebooks();
    const fake = await fakeServer();
    const { act } = await boot(fake, { workspace: root });
    await embedded(act);
    expect(fake.received('movable apricot paragraph here')).toBe(true);
    expect((await semantic(act, 'movable apricot paragraph', { notebooks: [open] })).results[0]!.snippet).toBe('movable apricot paragraph here');
    await act('document_move', { id: openDoc, notebook: kept });
    await until('the moved document counted local-only', async () => (await status(act)).ignored['local-only'] === 6);
    // Its vectors are gone: nothing of it is found, in any notebook.
    const found = await semantic(act, 'movable apricot paragraph', { pageSize: 50 });
    expect(found.results.filter((hit) => hit.snippet.includes('movable'))).toEqual([]);
    expect((await status(act)).indexed).toBe(0);
    fake.texts.length = 0;
    const moved = (await act<{ results: { id: string }[] }>('search_fulltext', { query: 'movable' })).results[0]!;
    await act('block_update', { id: moved.id, markdown: 'movable SECRET paragraph edited after the move' });
    await until('the edit taken in', async () => (await status(act)).queued === 0);
    await act('embeddings_reindex', {});
    await embedded(act);
    expect(neverSent(fake.texts)).toEqual([]);
  });

  it('checks before each text sent again one by one (a batch refused) that its notebook was not made local-only meanwhile', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    await embedded(act);
    const notebook = await act<Created>('notebook_create', { name: 'Soon kept' });
    let marked = false;
    // The batch holding a text too long for the model is refused; while its texts go one at a time,
    // the person marks the notebook local-only.
    fake.rejectText = (text) => text.includes('far too long');
    fake.beforeAnswer = async (input) => {
      if (input.length !== 1 || marked) return;
      marked = true;
      await act('notebook_set_privacy', { id: notebook.id, egress: 'local-only' });
    };
    fake.texts.length = 0;
    await act('document_create', { notebook: notebook.id, title: 'Soon kept', markdown: 'far too long paragraph\n\nSECRET one\n\nSECRET two\n\nSECRET three' });
    await until('the notebook counted local-only', async () => { const now = await status(act); return (now.ignored['local-only'] ?? 0) >= 4 && now.queued === 0 && now.pending === 0; });
    expect(marked).toBe(true);
    // Sent in the refused batch only (before the mark), never one by one after it.
    const single = fake.requests.filter((input) => input.length === 1).flat();
    expect(single.filter((text) => text.includes('SECRET')).length).toBeLessThanOrEqual(1);
    expect(single.length).toBeLessThanOrEqual(2);
  });

  it('follows the flag: marking a notebook local-only drops its remote vectors, unmarking embeds it again', async () => {
    const { root, open } = await twoNotebooks();
    const fake = await fakeServer();
    const { act, kernel } = await boot(fake, { workspace: root });
    await embedded(act);
    await setEgress(kernel, open, true);
    await act('index_rebuild', {});
    const marked = await embedded(act, (current) => current.ignored['local-only'] === 6);
    expect(marked.indexed).toBe(0);
    fake.texts.length = 0;
    const block = (await act<{ results: { id: string }[] }>('search_fulltext', { query: 'jam' })).results[0]!;
    await act('block_update', { id: block.id, markdown: 'apricot jam SECRET family recipe' });
    await until('the edit taken in', async () => (await status(act)).queued === 0);
    expect(neverSent(fake.texts)).toEqual([]);
    expect((await semantic(act, 'apricot jam')).results).toEqual([]);
    // Unmarked: embedded again (the local-only one stays local).
    await setEgress(kernel, open, false);
    await act('index_rebuild', {});
    const unmarked = await embedded(act, (current) => current.indexed === 3);
    expect(unmarked.ignored['local-only']).toBe(3);
    expect(fake.received('apricot jam SECRET family recipe')).toBe(true);
    expect(fake.texts.filter((text) => KEPT_TEXTS.some((kept) => text.includes(kept)))).toEqual([]);
  });

  it('embeds local-only notebooks with a local embedder', async () => {
    const { root, kept } = await twoNotebooks();
    const { act } = await boot(undefined, { workspace: root, embedder: 'local' });
    const done = await embedded(act);
    expect([done.indexed, done.ignored['local-only']]).toEqual([6, 0]);
    const found = await semantic(act, 'apricot confession kept');
    expect(found.results[0]!.notebook).toBe(kept);
    expect(found.complete).toBe(true);
  });
});

describe('semantic search and the gate', () => {
  it('asks the person before an agent searches through the remote embedder, and not through a local one', async () => {
    const fake = await fakeServer();
    const remote = await boot(fake);
    const outcome = await remote.kernel.pipeline.call({ target: 'search_semantic', input: { query: 'anything' }, principal: agent() });
    expect(outcome.status).toBe('confirmation_required');
    expect(fake.texts).toEqual([]);
    const local = await boot(undefined, { embedder: 'local' });
    const ran = await local.kernel.pipeline.call({ target: 'search_semantic', input: { query: 'anything' }, principal: agent() });
    expect(ran.status).toBe('ok');
  });
});

describe('semantic search and readers', () => {
  it('never sends a reader\'s query to a remote embedder: the search says it is unavailable to them', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'Pub', access: 'published' });
    await act('document_create', { notebook: notebook.id, title: 'Public page', markdown: 'a published paragraph about gardens' });
    await embedded(act);
    fake.texts.length = 0;
    const error = await act('search_semantic', { query: 'reader query text' }, reader).then(() => undefined, (caught: { message: string }) => caught);
    expect(error?.message).toContain("a reader's call does not use the embedder providers/openai");
    expect(fake.texts).toEqual([]);
    // What the reader may learn of the indexer: whether it is on, no counts over private notebooks.
    expect(await act('embeddings_status', {}, reader)).not.toHaveProperty('total');
  });
});

describe('disabling search-semantic', () => {
  const servers: RunningServer[] = [];
  it('removes its actions from the registry, HTTP and MCP', async () => {
    const ADMIN = 'qk_semantic-disabled-admin';
    const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: createHash('sha256').update(ADMIN).digest('hex') }] };
    const { kernel } = await boot(undefined, { config: { plugins: { 'search-semantic': { enabled: false } }, auth }, embedder: 'none' });
    expect(kernel.registry.list().filter((action) => action.pluginId === 'search-semantic')).toEqual([]);
    expect(kernel.registry.get('search_semantic')).toBeUndefined();
    expect(kernel.registry.get('search_fulltext')).toBeDefined();
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    try {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` };
      const http = await rawRequest(`${server.url}/api/actions/search-semantic/search/semantic`, { method: 'POST', headers, body: JSON.stringify({ query: 'x' }) });
      expect(http.status).toBe(404);
      const client = await connectMcp(server.url, ADMIN);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      await client.close();
      expect(names).toContain('search_fulltext');
      expect(names.filter((name) => name === 'search_semantic' || name.startsWith('embeddings_'))).toEqual([]);
    } finally {
      for (const running of servers.splice(0)) await running.close();
    }
  });
});

describe('semantic search: a notebook written again with its local-only flag unchanged', () => {
  it('leaves a search complete right after (a rename or a start\'s sync was counted as blocks being taken in)', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'Plain' });
    await act('document_create', { notebook: notebook.id, title: 'Plums', markdown: 'purple plums ripen in the sun' });
    await embedded(act);
    const notes: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      await act('notebook_rename', { id: notebook.id, name: `Plain ${i}` });
      notes.push((await semantic(act, 'purple plums')).note);
    }
    expect(notes).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });
});
