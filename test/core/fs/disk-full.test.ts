import { createHash } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { Kernel } from '../../../core/kernel.js';
import { silentLogger } from '../../../core/log.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { caught, withTestActivationLimit } from '../../helpers/harness.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';
import { canMount, fillDisk, freeDisk, mountRefusal, mountTmpfs, unmount } from '../../helpers/tmpfs.js';

const ADMIN = 'qk_disk-full-admin';
const config: KernelConfigFile = withTestActivationLimit({
  auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] },
  plugins: { blocks: { config: { watch: false, welcome: false } } },
});
const MiB = 1024 * 1024;

/**
 * A full disk over real HTTP: tmpfs mounts filled to the last block, so every write path meets a real
 * ENOSPC (or SQLITE_FULL), and must answer 507 DISK_FULL naming what was not written, then go on once
 * space is freed. Kernels are closed here, before the mounts go (an open file keeps a mount busy).
 */
describe.skipIf(!canMount)(`a full disk${mountRefusal ? ` (skipped: ${mountRefusal})` : ''}`, () => {
  const kernels: Kernel[] = [];
  const servers: RunningServer[] = [];
  const mounts: string[] = [];
  const folders: string[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    for (const kernel of kernels.splice(0)) await kernel.close();
    for (const mount of mounts.splice(0).reverse()) unmount(mount);
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });

  async function workspaceWith(mounted: { at: string; bytes: number }): Promise<{ workspace: string; mount: string }> {
    const root = await mkdtemp(join(tmpdir(), 'quire-disk-full-'));
    folders.push(root);
    const workspace = join(root, 'ws');
    const mount = mounted.at === '.' ? workspace : join(workspace, mounted.at);
    mountTmpfs(mount, mounted.bytes);
    mounts.push(mount);
    return { workspace, mount };
  }

  async function serve(workspace: string): Promise<{ kernel: Kernel; url: string }> {
    const kernel = await Kernel.boot({ workspace, config, logger: silentLogger });
    kernels.push(kernel);
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, url: server.url };
  }

  async function stop(kernel: Kernel): Promise<void> {
    for (const server of servers.splice(0)) await server.close();
    await kernel.close();
    kernels.splice(kernels.indexOf(kernel), 1);
  }

  const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> => rawRequest(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}`, ...headers },
    body: JSON.stringify(body),
  });
  /** `tool_action` of the blocks plugin, or `plugin/tool/action`. */
  const action = (url: string, name: string, input: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(url, `/api/actions/${name.includes('/') ? name : `blocks/${name.replace('_', '/')}`}`, input, headers);

  async function verifyAudit(workspace: string): Promise<{ code: number; text: string }> {
    const io = bufferIO();
    const code = await runCli(['audit', 'verify', '--workspace', workspace], io);
    return { code, text: `${io.outText()}\n${io.errText()}` };
  }

  function expectDiskFull(response: RawResponse, what: readonly string[]): void {
    expect(response.status, response.body).toBe(507);
    const error = response.json().error;
    expect(error?.code).toBe('DISK_FULL');
    expect(what).toContain(error?.details.what);
    expect(typeof error?.details.file).toBe('string');
  }

  it('answers 507 DISK_FULL on every write while the workspace is full, then goes on, restarts and the audit log verifies', async () => {
    const { workspace, mount } = await workspaceWith({ at: '.', bytes: 4 * MiB });
    const { kernel, url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'Full' })).json().result as { id: string };
    const filler = fillDisk(mount);

    expectDiskFull(await action(url, 'document_create', { notebook: notebook.id, title: 'Lost', markdown: 'text' }), ['document', 'audit log']);
    expectDiskFull(await post(url, '/api/agent/sessions', { title: 'no room' }), ['session']);
    expectDiskFull(await action(url, 'snapshots/snapshot/create', {}, { prefer: 'wait=20' }), ['snapshot object', 'snapshot record', 'audit log']);
    const locked = await caught(Kernel.boot({ workspace: join(mount, 'second'), config, logger: silentLogger }));
    expect(locked.code).toBe('DISK_FULL');
    expect(locked.details?.what).toBe('workspace lock');

    freeDisk(filler);
    const created = await action(url, 'document_create', { notebook: notebook.id, title: 'Kept', markdown: 'text' });
    expect(created.status, created.body).toBe(200);
    expect((await post(url, '/api/agent/sessions', { title: 'room again' })).status).toBe(201);
    await stop(kernel);

    const again = await serve(workspace);
    const listed = await action(again.url, 'document_list', { notebook: notebook.id });
    expect((listed.json().result as { documents: { title: string }[] }).documents.map((doc) => doc.title)).toContain('Kept');
    await stop(again.kernel);
    expect(await verifyAudit(workspace)).toMatchObject({ code: 0 });
  });

  it('stops an import whose step finds the disk full: 507 naming how many documents were imported and stay, none half written', async () => {
    const { workspace, mount } = await workspaceWith({ at: 'data', bytes: 1 * MiB });
    const { kernel, url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'Filled by an import' })).json().result as { id: string };
    const source = join(dirname(workspace), 'notes');
    await mkdir(source);
    // About 4 KB each: a step of 64 is about 260 KB, so the fourth or fifth step meets the full disk.
    for (let i = 0; i < 400; i++) await writeFile(join(source, `note-${String(i).padStart(3, '0')}.md`), `# Note ${i}\n\n${'Text that fills the disk. '.repeat(160)}\n`);
    const answer = await action(url, 'import_markdown', { notebook: notebook.id, path: source }, { prefer: 'wait=60' });
    expectDiskFull(answer, ['document']);
    const error = answer.json().error!;
    const imported = error.details.documentsImported as number;
    expect(imported % 64, 'whole steps').toBe(0);
    expect(imported).toBeGreaterThan(0);
    expect(error.details.planned).toBe(400);
    expect(error.message).toContain(`${imported} of 400 documents were imported before it, and stay`);
    // What it says stays is what is there, listed and on disk, and no record would undo it at a start.
    const files = async () => (await readdir(join(mount, notebook.id))).filter((name) => name.endsWith('.json') && !name.startsWith('.')).length;
    expect(await files()).toBe(imported);
    expect(((await action(url, 'document_list', { notebook: notebook.id })).json().result as { documents: unknown[] }).documents).toHaveLength(imported);
    expect(await readdir(join(workspace, '.quire', 'journal', 'imports'))).toEqual([]);
    await stop(kernel);
    const again = await serve(workspace);
    expect(((await action(again.url, 'document_list', { notebook: notebook.id })).json().result as { documents: unknown[] }).documents).toHaveLength(imported);
    expect(await files()).toBe(imported);
  });

  it('answers 507 naming the session when a save cannot be appended to its journal, and keeps the session as it was', async () => {
    const { workspace, mount } = await workspaceWith({ at: '.', bytes: 4 * MiB });
    const { kernel, url } = await serve(workspace);
    const created = await post(url, '/api/agent/sessions', { title: 'kept' });
    expect(created.status, created.body).toBe(201);
    const id = (created.json() as { session: { id: string } }).session.id;
    const put = (entries: unknown[], expectedRevision: number) => rawRequest(`${url}/api/agent/sessions/${id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ entries, expectedRevision }),
    });
    const first = { id: 'e1', type: 'user', content: 'first' };
    const saved = await put([first], 1);
    expect(saved.status, saved.body).toBe(200);
    const filler = fillDisk(mount);
    // A save large enough to need a new block of the journal: it must fail whole, not half-append.
    expectDiskFull(await put([first, { id: 'e2', type: 'user', content: 'x'.repeat(64 * 1024) }], 2), ['session']);
    freeDisk(filler);
    const read = await rawRequest(`${url}/api/agent/sessions/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect((read.json() as { session: { revision: number; entries: { id: string }[] } }).session).toMatchObject({ revision: 2, entries: [{ id: 'e1' }] });
    expect((await put([first, { id: 'e2', type: 'user', content: 'second' }], 2)).status).toBe(200);
    await stop(kernel);
    const again = await serve(workspace);
    const reread = await rawRequest(`${again.url}/api/agent/sessions/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect((reread.json() as { session: { revision: number; entries: { id: string }[] } }).session).toMatchObject({ revision: 3, entries: [{ id: 'e1' }, { id: 'e2' }] });
    await stop(again.kernel);
  });

  it('leaves the audit log as it was when an append fails halfway, so the next start and verify succeed', async () => {
    const { workspace, mount } = await workspaceWith({ at: 'audit', bytes: 256 * 1024 });
    const { kernel, url } = await serve(workspace);
    expect((await action(url, 'notebook_create', { name: 'first' })).status).toBe(200);
    const filler = fillDisk(mount);
    // Lines fit into the log's last, partly used block until one crosses into a block there is no room for.
    let failed: RawResponse | undefined;
    let before = await readFile(kernel.audit.logFile);
    for (let i = 0; i < 40 && !failed; i++) {
      const response = await action(url, 'notebook_create', { name: `notebook ${i}` });
      if (response.status === 200) before = await readFile(kernel.audit.logFile);
      else failed = response;
    }
    expect(failed, 'no append failed').toBeDefined();
    expectDiskFull(failed!, ['audit log']);
    expect(failed!.json().error?.details.file).toBe('audit/audit.jsonl');
    expect((await readFile(kernel.audit.logFile)).equals(before)).toBe(true);

    freeDisk(filler);
    expect((await action(url, 'notebook_create', { name: 'after' })).status).toBe(200);
    await stop(kernel);
    const again = await serve(workspace);
    expect((await action(again.url, 'notebook_create', { name: 'restarted' })).status).toBe(200);
    await stop(again.kernel);
    const verify = await verifyAudit(workspace);
    expect(verify.code, verify.text).toBe(0);
    expect((await readdir(join(workspace, 'audit'))).filter((name) => name.includes('.torn-'))).toEqual([]);
  });

  it.each([
    { folder: 'data', what: 'document' },
    { folder: 'index', what: 'index' },
  ])('names the $what when $folder/ is full, and writes it once there is room', async ({ folder, what }) => {
    const { workspace, mount } = await workspaceWith({ at: folder, bytes: 1 * MiB });
    const { url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'N' })).json().result as { id: string };
    const filler = fillDisk(mount);
    let response: RawResponse | undefined;
    // The index's write-ahead log may still have room in blocks it already holds: write until it has none.
    for (let i = 0; i < 40; i++) {
      response = await action(url, 'document_create', { notebook: notebook.id, title: `doc ${i}`, markdown: 'x'.repeat(2000) });
      if (response.status !== 200) break;
    }
    expectDiskFull(response!, [what]);
    freeDisk(filler);
    expect((await action(url, 'document_create', { notebook: notebook.id, title: 'room', markdown: 'x' })).status).toBe(200);
  });

  it('names the document when the write journal finds too little room for a change, written short then refused, and takes it once there is room', async () => {
    const { workspace, mount } = await workspaceWith({ at: '.quire/journal/writes', bytes: 1 * MiB });
    const { url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'N' })).json().result as { id: string };
    const doc = (await action(url, 'document_create', { notebook: notebook.id, title: 'D', markdown: 'first' })).json().result as { id: string };
    const block = ((await action(url, 'document_get', { id: doc.id })).json().result as { document: { children: { id: string }[] } }).document.children[0]!.id;
    expect((await action(url, 'block_update', { id: block, markdown: 'second' })).status).toBe(200);
    const filler = fillDisk(mount);
    // Larger than what is left (the end of a page, a segment a checkpoint freed): the journal's write is
    // short first, then meets the full disk. It was a 500 saying how many bytes were taken.
    expectDiskFull(await action(url, 'block_update', { id: block, markdown: 'x'.repeat(300_000) }), ['document']);
    expect(((await action(url, 'document_get_markdown', { id: doc.id })).json().result as { markdown: string }).markdown).toBe('second\n');
    freeDisk(filler);
    expect((await action(url, 'block_update', { id: block, markdown: 'third' })).status).toBe(200);
  });

  it('finishes a rollback the disk stopped part way without overwriting what was written since: the person\'s edit stays, the rest comes back', async () => {
    const { workspace, mount } = await workspaceWith({ at: 'data', bytes: 2 * MiB });
    const { kernel, url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'N' })).json().result as { id: string };
    const big = (i: number) => Array.from({ length: 40 }, (_, k) => `document ${i}, paragraph ${k}: ${'lorem ipsum dolor '.repeat(12)}`).join('\n\n');
    const removed: string[] = [];
    for (let i = 0; i < 6; i++) removed.push(((await action(url, 'document_create', { notebook: notebook.id, title: `D${i}`, markdown: big(i) })).json().result as { id: string }).id);
    const kept = (await action(url, 'document_create', { notebook: notebook.id, title: 'K', markdown: 'K as in the snapshot' })).json().result as { id: string };
    const snapshot = (await action(url, 'snapshots/snapshot/create', { memo: 'before' }, { prefer: 'wait=20' })).json().result as { id: string };
    const block = ((await action(url, 'document_get', { id: kept.id })).json().result as { document: { children: { id: string }[] } }).document.children[0]!.id;
    expect((await action(url, 'block_update', { id: block, markdown: 'K changed after the snapshot' })).status).toBe(200);
    for (const id of removed) expect((await action(url, 'document_remove', { id })).status).toBe(200);
    // Room for about one document: the rollback writes one or two, then meets the full disk.
    const filler = fillDisk(mount);
    freeDisk(filler);
    const room = statfsSync(mount);
    await writeFile(join(mount, '.filler'), Buffer.alloc(Math.max(0, room.bavail * room.bsize - 90 * 1024)));
    const stopped = await action(url, 'snapshots/snapshot/rollback', { id: snapshot.id }, { prefer: 'wait=20' });
    expect(stopped.status, stopped.body).toBe(507);
    expect(stopped.json().error).toMatchObject({ code: 'DISK_FULL', details: { unfinished: true } });
    await rm(join(mount, '.filler'));
    // Acknowledged after the failure, on top of the part-way state.
    expect((await action(url, 'block_update', { id: block, markdown: 'the person wrote this after the failed rollback' })).status).toBe(200);
    await stop(kernel);

    const again = await serve(workspace);
    // The start finishes the rollback in the write queue; a write queued after it waits for it.
    await action(again.url, 'notebook_create', { name: 'after the start' });
    const text = await readFile(join(mount, notebook.id, `${kept.id}.json`), 'utf8');
    expect(text).toContain('the person wrote this after the failed rollback');
    const listed = (await action(again.url, 'document_list', { notebook: notebook.id })).json().result as { documents: { id: string }[] };
    expect(listed.documents.map((doc) => doc.id).sort()).toEqual([...removed, kept.id].sort());
    expect(await readdir(join(workspace, '.quire', 'journal', 'snapshots')).catch(() => [])).toEqual([]);
    await stop(again.kernel);
  });

  it('names the snapshot object when the repository is full', async () => {
    const { workspace, mount } = await workspaceWith({ at: 'repo', bytes: 1 * MiB });
    const { url } = await serve(workspace);
    const notebook = (await action(url, 'notebook_create', { name: 'N' })).json().result as { id: string };
    expect((await action(url, 'document_create', { notebook: notebook.id, title: 'D', markdown: 'some text' })).status).toBe(200);
    const filler = fillDisk(mount);
    const response = await action(url, 'snapshots/snapshot/create', { memo: 'full' }, { prefer: 'wait=20' });
    expectDiskFull(response, ['snapshot object']);
    freeDisk(filler);
    expect((await action(url, 'snapshots/snapshot/create', { memo: 'room' }, { prefer: 'wait=20' })).status).toBe(200);
  });
});
