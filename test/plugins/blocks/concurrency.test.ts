import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { caught } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { useBlocks } from './blocks-harness.js';

const { boot } = useBlocks();
const ADMIN = 'qk_blocks-admin-token';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

interface Created { id: string }
interface Tree { document: { attrs: Record<string, string>; children: { id: string; attrs: Record<string, string>; content?: string }[] } }

describe('concurrent writers', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  it('applies writes to one document that arrive together in order, each answered alone: a refused one changes nothing of the others', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const docs = await Promise.all([0, 1, 2].map((i) => act<Created>('document_create', { notebook: notebook.id, title: `D${i}`, markdown: `start ${i}` })));
    const target = await act<Tree>('document_get', { id: docs[0]!.id });
    const first = target.document.children[0]!;
    // 30 appends to three documents at once, a stale update and one to a block that is not there among them.
    const writes = Array.from({ length: 30 }, (_, i) => act('block_append', { parentId: docs[i % 3]!.id, markdown: `line ${i}` }).then(() => 'ok', (error: { code?: string }) => error.code));
    const stale = caught(act('block_update', { id: first.id, markdown: 'stale', expectedUpdated: '2000-01-01T00:00:00.000Z' }));
    const missing = caught(act('block_update', { id: '20200101000000-zzzzzzz', markdown: 'nowhere' }));
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 30 }, () => 'ok'));
    expect([(await stale).code, (await missing).code]).toEqual(['CONFLICT', 'NOT_FOUND']);
    for (const [d, doc] of docs.entries()) {
      const children = (await act<Tree>('document_get', { id: doc.id })).document.children.map((child) => child.content);
      expect(children).toEqual([`start ${d}`, ...Array.from({ length: 10 }, (_, k) => `line ${d + 3 * k}`)]);
      const file = JSON.parse(await readFile(join(kernel.workspace.dataDir, notebook.id, `${doc.id}.json`), 'utf8')) as { children: { content: string }[] };
      expect(file.children.map((child) => child.content)).toEqual(children);
    }
  });

  it('refuses a write with a stale expected updated and leaves the file byte-identical', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'one\n\ntwo\n' });
    const tree = await act<Tree>('document_get', { id: doc.id });
    const block = tree.document.children[0]!;
    const seen = block.attrs.updated!;
    await act('block_update', { id: block.id, markdown: 'changed once', expectedUpdated: seen });
    const file = join(kernel.workspace.dataDir, notebook.id, `${doc.id}.json`);
    const before = await readFile(file);
    for (const [target, input] of [
      ['block_update', { id: block.id, markdown: 'lost update', expectedUpdated: seen }],
      ['block_delete', { id: block.id, expectedUpdated: seen }],
      ['attr_set', { id: block.id, attrs: { 'custom-x': '1' }, expectedUpdated: seen }],
      ['document_rename', { id: doc.id, title: 'New', expectedUpdated: '2000-01-01T00:00:00.000Z' }],
    ] as const) {
      const error = await caught(act(target, input));
      expect(error.code).toBe('CONFLICT');
    }
    expect(await readFile(file)).toEqual(before);
  });

  it('refuses an update, move or delete of a container read before a change inside it, arriving in the same batch or later', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'List', markdown: '> quoted one\n>\n> quoted two\n\nafter' });
    type Quote = { id: string; attrs: Record<string, string>; children: { id: string }[] };
    const read = async () => (await act<{ document: { children: Quote[] } }>('document_get', { id: doc.id })).document.children;
    const [quote, after] = await read();
    const seen = quote!.attrs.updated!;
    // A person edits a paragraph inside the quote while the agent, which read the quote before, rewrites it whole.
    const [edit, overwrite] = await Promise.allSettled([
      act('block_update', { id: quote!.children[0]!.id, markdown: 'a person\'s edit' }),
      act('block_update', { id: quote!.id, markdown: '> the agent\'s version', expectedUpdated: seen }),
    ]);
    expect([edit.status, overwrite.status, (overwrite as PromiseRejectedResult).reason?.code]).toEqual(['fulfilled', 'rejected', 'CONFLICT']);
    expect(JSON.stringify(await read())).toContain('a person\'s edit');
    // Later calls with the quote as read before the edit: refused too.
    for (const [action, input] of [['block_delete', { id: quote!.id }], ['block_move', { id: quote!.id, previousId: after!.id }], ['block_update', { id: quote!.id, markdown: 'x' }]] as const) {
      expect((await caught(act(action, { ...input, expectedUpdated: seen }))).code).toBe('CONFLICT');
    }
    // An attribute set inside counts as a change inside, and the quote's new `updated` is accepted.
    await act('attr_set', { id: quote!.children[1]!.id, attrs: { 'custom-kept': 'yes' } });
    const [fresh] = await read();
    expect(fresh!.attrs.updated! > seen).toBe(true);
    // An insert into it says the quote's new stamp, which its writer passes on.
    const inserted = await act<{ parentUpdated?: string }>('block_append', { parentId: quote!.id, markdown: 'quoted three' });
    expect(inserted.parentUpdated! > fresh!.attrs.updated!).toBe(true);
    const rewritten = await act<{ updated: string }>('block_update', { id: quote!.id, markdown: '> rewritten by the one who inserted', expectedUpdated: inserted.parentUpdated });
    await act('block_delete', { id: quote!.id, expectedUpdated: rewritten.updated });
  });

  it('gives two writes in the same millisecond different updated values', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'one\n' });
    const block = (await act<Tree>('document_get', { id: doc.id })).document.children[0]!;
    const stamps = new Set<string>();
    for (let i = 0; i < 5; i++) stamps.add((await act<{ updated: string }>('block_update', { id: block.id, markdown: `v${i}` })).updated);
    expect(stamps.size).toBe(5);
  });

  it('loses no update when many HTTP requests append to one document at once', async () => {
    const { kernel, act } = await boot({ config: { auth: { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN) }] } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D' });
    const writers = 40;
    const responses = await Promise.all(Array.from({ length: writers }, (_, i) => rawRequest(`${server.url}/api/actions/blocks/block/append`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ parentId: doc.id, markdown: `line ${i}` }),
    })));
    expect(responses.map((response) => response.status)).toEqual(Array(writers).fill(200));
    const tree = await act<Tree>('document_get', { id: doc.id });
    const contents = tree.document.children.map((block) => block.content).filter((text) => text?.startsWith('line '));
    expect(new Set(contents).size).toBe(writers);
    expect(tree.document.children.every((block) => block.attrs.updatedBy === 'person:alice' || block.content === '')).toBe(true);
  });
});
