import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../core/http/serve.js';
import { IntentJournal } from '../../core/index.js';
import { newId } from '../../core/ids.js';
import { runCli } from '../../core/cli/run-cli.js';
import type { Kernel } from '../../core/kernel.js';
import { turnDependencies } from '../../core/turn/kernel-turns.js';
import { runTurn } from '../../core/turn/turn-loop.js';
import { undoTurn } from '../../core/turn/undo-turn.js';
import { answer, scriptedProvider, toolCalls } from '../fakes/scripted-provider.js';
import { bufferIO } from '../helpers/buffer-io.js';
import { caught, useHarness } from '../helpers/harness.js';
import { rawRequest } from '../helpers/http-client.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { actor, agent, type Act } from './blocks/blocks-harness.js';

const ADMIN = 'qk_snap-admin';
const READER = 'qk_snap-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: sha(ADMIN) }, { name: 'rita', role: 'reader' as const, sha256: sha(READER) }] };

interface Summary { id: string; origin: string; memo: string; tags: string[] }
interface Page { snapshots: Summary[]; total: number; next?: string }

describe('snapshots: paging, deletion and the retention of the agent\'s turn snapshots', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  const boot = async (options: { workspace?: string; retention?: unknown } = {}) => {
    const kernel = await harness.boot({
      realManifests: true,
      ...(options.workspace ? { workspace: options.workspace } : {}),
      config: { auth, plugins: { blocks: { config: { watch: false, welcome: false } }, ...(options.retention !== undefined ? { snapshots: { config: { retention: options.retention } } } : {}) } },
    });
    return { kernel, act: actor(kernel) };
  };
  const notes = async (act: Act) => {
    const notebook = await act<{ id: string }>('notebook_create', { name: 'N' });
    const doc = await act<{ id: string }>('document_create', { notebook: notebook.id, title: 'Kept', markdown: 'original text' });
    return doc.id;
  };
  /** One writing agent turn: two snapshots with `agent:<session>/<turn>` as origin. */
  const agentTurn = async (kernel: Kernel, sessionId: string, doc: string, text: string): Promise<string> => {
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'block_append', args: { parentId: doc, markdown: text } }), answer('done')]);
    const outcome = await runTurn(turnDependencies(kernel), { sessionId, message: `add ${text}`, provider, systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
    expect(outcome.state).toBe('finished');
    return outcome.turnID;
  };

  it('lists a page at a time, newest first, and deletes over HTTP what a person names, refusing what it must (404, 409, 400, 403), the agent and MCP never offered it', async () => {
    const { kernel, act } = await boot();
    const doc = await notes(act);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      await act('block_append', { parentId: doc, markdown: `line ${i} ${'x'.repeat(200)}` });
      ids.push((await act<{ id: string }>('snapshot_create', { memo: `s${i}` })).id);
    }
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const post = (token: string, action: string, body: unknown) => rawRequest(`${server.url}/api/actions/snapshots/snapshot/${action}`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const page = async (body: Record<string, unknown>) => ((await post(ADMIN, 'list', body)).json() as unknown as { result: Page }).result;
    const first = await page({ limit: 2 });
    expect([first.snapshots.map((s) => s.memo), first.total, first.next]).toEqual([['s4', 's3'], 5, ids[3]]);
    const second = await page({ limit: 2, before: first.next });
    expect([second.snapshots.map((s) => s.memo), second.next]).toEqual([['s2', 's1'], ids[1]]);
    const last = await page({ limit: 2, before: second.next });
    expect([last.snapshots.map((s) => s.memo), last.next]).toEqual([['s0'], undefined]);
    expect((await page({ origin: 'agent:' })).total).toBe(0);
    expect((await page({})).snapshots).toHaveLength(5);
    expect((await post(ADMIN, 'list', { limit: 0 })).status).toBe(400);
    const gone = await post(ADMIN, 'list', { before: newId() });
    expect([gone.status, gone.json().error?.details.field]).toEqual([404, 'before']);

    await act('snapshot_tag', { id: ids[4], tag: 'keep' });
    // Any id refused: nothing is deleted.
    const unknown = newId();
    const missing = await post(ADMIN, 'delete', { ids: [ids[0], unknown] });
    expect([missing.status, missing.json().error?.message]).toEqual([404, expect.stringContaining(unknown)]);
    const tagged = await post(ADMIN, 'delete', { ids: [ids[0], ids[4]] });
    expect([tagged.status, tagged.json().error?.code, tagged.json().error?.message]).toEqual([409, 'CONFLICT', expect.stringContaining('untag it first')]);
    expect((await page({})).total).toBe(5);
    expect((await post(ADMIN, 'delete', { ids: [] })).status).toBe(400);
    expect((await post(READER, 'delete', { ids: [ids[0]] })).status).toBe(403);
    const objectsBefore = await objectCount(kernel);
    // A change a crash cut short (its intent still in the journal) keeps the objects it writes, whatever snapshot goes.
    const kept = Object.values((await act<{ files: Record<string, { hash: string }> }>('snapshot_get', { id: ids[1] })).files).map((file) => file.hash);
    const journal = new IntentJournal<{ label: string; writes: { path: string; hash: string }[]; removes: string[] }>(join(kernel.workspace.privateDir, 'journal', 'snapshots'));
    const pending = await journal.begin({ label: 'a rollback cut short', writes: kept.map((hash, i) => ({ path: `x${i}.json`, hash })), removes: [] });
    const deleted = await post(ADMIN, 'delete', { ids: [ids[0], ids[1]] });
    expect([deleted.status, deleted.json()]).toEqual([200, { result: { deleted: [ids[0], ids[1]] } }]);
    // The contents only those two held go just after, in the background (a purge queued after it waits for it).
    expect(await act('snapshot_purge', {})).toEqual({ removed: 0 });
    expect(await objectCount(kernel)).toBeLessThan(objectsBefore);
    expect(await act('snapshot_verify', {})).toMatchObject({ damaged: [] });
    for (const hash of kept) expect(existsSync(join(kernel.workspace.root, 'repo', 'objects', hash.slice(0, 2), hash))).toBe(true);
    await journal.done(pending);
    // The index holds no line of a deleted snapshot: later processes do not replay them.
    expect(await readFile(join(kernel.workspace.root, 'repo', 'index.jsonl'), 'utf8')).not.toContain(ids[0]);
    expect((await page({})).snapshots.map((s) => s.memo)).toEqual(['s4', 's3', 's2']);
    await act('snapshot_rollback', { id: ids[2] });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).toContain('line 2');
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).not.toContain('line 3');

    expect((await caught(act('snapshot_delete', { ids: [ids[2]] }, agent()))).code).toBe('ACTION_NOT_FOUND');
    // Nor may the agent untag: a tag is what keeps a snapshot from deletion and from the retention.
    expect((await caught(act('snapshot_untag', { id: ids[4], tag: 'keep' }, agent()))).code).toBe('ACTION_NOT_FOUND');
    const client = await connectMcp(server.url, ADMIN);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('snapshot_list');
      expect(names).not.toContain('snapshot_delete');
    } finally {
      await client.close();
    }
  });

  it('removes the agent\'s turn snapshots past the retention at start, a turn\'s two together, keeping tagged turns, the newest turns and a person\'s snapshots; false keeps all', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const first = await boot({ workspace, retention: false });
    const doc = await notes(first.act);
    const sessionId = newId();
    await first.kernel.sessions.save({ id: sessionId, entries: [] });
    await first.kernel.sessions.setPermissionMode(sessionId, 'auto');
    const turns: string[] = [];
    for (const text of ['alpha', 'beta', 'gamma', 'delta']) turns.push(await agentTurn(first.kernel, sessionId, doc, text));
    const person = (await first.act<{ id: string }>('snapshot_create', { memo: 'by hand' })).id;
    const all = (await first.act<Page>('snapshot_list', {})).snapshots;
    expect(all).toHaveLength(9);
    const ofTurn = (turn: string) => all.filter((s) => s.origin === `agent:${sessionId}/${turn}`).map((s) => s.id);
    // The second turn is tagged on one of its two snapshots: both stay.
    await first.act('snapshot_tag', { id: ofTurn(turns[1]!)[0], tag: 'good' });
    await first.kernel.close();

    // The first two turns were forty days ago (their records say so; the index is read from the records again).
    const records = join(workspace, 'repo', 'snapshots');
    for (const id of [...ofTurn(turns[0]!), ...ofTurn(turns[1]!)]) {
      const record = JSON.parse(await readFile(join(records, `${id}.json`), 'utf8')) as { created: string };
      record.created = new Date(Date.parse(record.created) - 40 * 24 * 3600_000).toISOString();
      await writeFile(join(records, `${id}.json`), `${JSON.stringify(record)}\n`);
    }
    await rm(join(workspace, 'repo', 'index.jsonl'), { force: true });

    const kept = await boot({ workspace, retention: false });
    // The purge waits for the start's retention pass (the repository's work runs one at a time).
    await kept.act('snapshot_purge', {});
    expect((await kept.act<Page>('snapshot_list', {})).total).toBe(9);
    await kept.kernel.close();

    const second = await boot({ workspace, retention: { agentTurns: 1 } });
    await second.act('snapshot_purge', {});
    // Only the newest turn is kept by count; the third is kept by its age, the second by its tag.
    const left = (await second.act<Page>('snapshot_list', {})).snapshots.map((s) => s.id).sort();
    expect(left).toEqual([...ofTurn(turns[1]!), ...ofTurn(turns[2]!), ...ofTurn(turns[3]!), person].sort());
    expect(await second.act('snapshot_verify', {})).toMatchObject({ snapshots: 7, damaged: [] });
    // Undoing a turn whose snapshots are gone says so.
    const undo = await caught(undoTurn(second.kernel, sessionId, turns[0]!, false, 'person:alice'));
    expect([undo.code, undo.message]).toEqual(['NOT_FOUND', expect.stringContaining('retention')]);
    // The newest turn is still undone from its snapshots.
    expect(await undoTurn(second.kernel, sessionId, turns[3]!, false, 'person:alice')).toMatchObject({ conflicts: [] });
    expect((await second.act<{ markdown: string }>('document_get_markdown', { id: doc })).markdown).not.toContain('delta');
  });

  it('works from the command line: list a page, delete', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await boot({ workspace });
    await notes(act);
    const a = (await act<{ id: string }>('snapshot_create', { memo: 'a' })).id;
    const b = (await act<{ id: string }>('snapshot_create', { memo: 'b' })).id;
    await kernel.close();
    const listed = bufferIO();
    expect(await runCli(['snapshot', 'list', '--limit', '1', '--workspace', workspace], listed)).toBe(0);
    expect([listed.outText().trim().split('\n').length, listed.outText()]).toEqual([1, expect.stringContaining(b)]);
    expect(listed.errText()).toContain(`--before ${b}`);
    const many = bufferIO();
    expect(await runCli(['snapshot', 'list', '--limit', 'many', '--workspace', workspace], many)).toBe(2);
    // What was wrong, not only the usage line.
    expect(many.errText()).toContain("quire snapshot list: --limit must be a whole number, not 'many'");
    const memo = bufferIO();
    expect(await runCli(['snapshot', 'create', '-m', 'before', 'big', 'change', '--workspace', workspace], memo)).toBe(2);
    expect(memo.errText()).toContain("unexpected arguments 'big', 'change': it takes no arguments besides options; quote a memo that holds spaces");
    const deleted = bufferIO();
    expect(await runCli(['snapshot', 'delete', a, '--workspace', workspace], deleted)).toBe(0);
    expect(deleted.outText()).toContain('deleted 1 snapshot(s)');
    expect(deleted.outText()).not.toContain('undefined');
    const after = bufferIO();
    expect(await runCli(['snapshot', 'list', '--workspace', workspace], after)).toBe(0);
    expect([after.outText().includes(a), after.outText().includes(b)]).toEqual([false, true]);
  });
});

/** Objects stored loose in the repository (a snapshot of a few changed files stores them so, not in a pack). */
async function objectCount(kernel: Kernel): Promise<number> {
  const entries = await readdir(join(kernel.workspace.root, 'repo', 'objects'), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && /^[0-9a-f]{64}$/.test(entry.name)).length;
}
