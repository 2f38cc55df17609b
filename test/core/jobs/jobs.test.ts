import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { JobRecord } from '../../../core/jobs/job-types.js';
import type { Kernel } from '../../../core/kernel.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';
import { readEvents, type SseEvent } from '../../helpers/sse-events.js';
import { MODEL_PROVIDER } from '../../../core/turn/model-provider-token.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { connectMcp } from '../../helpers/mcp-client.js';

const ADMIN = 'qk_jobs-admin';
const READER = 'qk_jobs-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN) }, { name: 'rita', role: 'reader', sha256: sha(READER) }] };
const DOCUMENTS = 1_515;

describe('long actions as jobs, and time limits that stop the work', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(config: KernelConfigFile = {}, workspace?: string, userPlugins?: Record<string, UserPlugin>): Promise<{ kernel: Kernel; url: string }> {
    const kernel = await harness.boot({
      realManifests: true, ...(workspace ? { workspace } : {}), ...(userPlugins ? { userPlugins } : {}),
      config: { auth, ...config, plugins: { blocks: { config: { watch: false, welcome: false } }, ...config.plugins } },
    });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, url: server.url };
  }

  const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const get = (url: string, path: string, token = ADMIN) => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  /** The job an answer names: in its body when it succeeded, behind its Location header when it failed. */
  async function jobOf(url: string, answer: Response): Promise<JobRecord> {
    if (answer.ok) return ((await answer.json()) as { job: JobRecord }).job;
    return ((await (await get(url, answer.headers.get('location')!)).json()) as { job: JobRecord }).job;
  }

  /** A folder of `count` Markdown notes of about 400 characters each. */
  async function notesFolder(count = DOCUMENTS): Promise<string> {
    const folder = await harness.tempDir('quire-notes-');
    const paragraph = 'Notes keep what a person learns; the agent reads and writes them, and the kernel stands between the two. '.repeat(4);
    for (let i = 0; i < count; i++) await writeFile(join(folder, `note-${String(i).padStart(4, '0')}.md`), `# Note ${i}\n\n${paragraph}\n\n- a task #t${i % 7}#\n`);
    return folder;
  }

  async function notebook(url: string): Promise<string> {
    const response = await post(url, '/api/actions/blocks/notebook/create', { name: 'Imported' });
    return ((await response.json()) as { result: { id: string } }).result.id;
  }

  async function documentFiles(kernel: Kernel, id: string): Promise<number> {
    return (await readdir(join(kernel.workspace.dataDir, id))).filter((name) => name.endsWith('.json') && !name.startsWith('.')).length;
  }

  async function listed(url: string, id: string): Promise<number> {
    const response = await post(url, '/api/actions/blocks/document/list', { notebook: id });
    return ((await response.json()) as { result: { documents: unknown[] } }).result.documents.length;
  }

  /** Follows a job's event stream to its end, calling `onEvent` on each. */
  async function follow(url: string, id: string, onEvent: (event: SseEvent) => Promise<void> | void = () => undefined): Promise<SseEvent[]> {
    const response = await get(url, `/api/jobs/${id}/events`);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    return readEvents(response, onEvent);
  }

  it('answers a long action with its job at once, streams its progress, and keeps the record', async () => {
    const { url, kernel } = await serve();
    const id = await notebook(url);
    const folder = await notesFolder(300);
    const response = await post(url, '/api/actions/blocks/import/markdown', { notebook: id, path: folder });
    expect(response.status).toBe(202);
    const { job } = (await response.json()) as { job: JobRecord };
    expect(response.headers.get('location')).toBe(`/api/jobs/${job.id}`);
    expect(job).toMatchObject({ action: 'import_markdown', state: 'running', startedBy: 'alice' });
    const events = await follow(url, job.id);
    expect(events[0]!.event).toBe('job');
    const progress = events.filter((event) => event.event === 'progress').map((event) => (event.data.job as JobRecord).progress);
    const end = events.at(-1)!;
    expect(end.event).toBe('end');
    // Unless the job ended before the stream was opened, its progress was seen growing to the end.
    if ((events[0]!.data.job as JobRecord).state === 'running') expect(progress.length).toBeGreaterThan(0);
    const done = (await (await get(url, `/api/jobs/${job.id}`)).json()) as { job: JobRecord };
    expect(done.job).toMatchObject({ state: 'succeeded', progress: { done: 300, total: 300 }, result: { documents: 300 } });
    expect(await documentFiles(kernel, id)).toBe(300);
    const record = JSON.parse(await readFile(join(kernel.workspace.root, 'jobs', `${job.id}.json`), 'utf8')) as JobRecord;
    expect(record.state).toBe('succeeded');
    // Should the kernel stop before an import answers, its record would say the import is undone.
    expect(record.progress.ifInterrupted).toMatch(/^an import cut short before it answered is undone at the next start/);
    expect(((await (await get(url, '/api/jobs')).json()) as { jobs: JobRecord[] }).jobs.map((item) => item.id)).toContain(job.id);
    expect((await get(url, '/api/jobs', READER)).status).toBe(403);
    expect((await get(url, '/api/jobs/20200101000000-aaaaaaa')).status).toBe(404);
    expect((await get(url, '/api/jobs/..%2F..%2Fquire')).status).toBe(404);
  });

  it('lists jobs in pages, newest first: by state, below a job, with or without their results, and refuses a bad query naming it', async () => {
    const { url, kernel } = await serve();
    const principal = { kind: 'person' as const, name: 'alice', role: 'admin' as const };
    const subject = { action: 'blocks/import/markdown', plugin: 'blocks', tool: 'import', name: 'markdown', principal };
    for (let i = 0; i < 5; i++) await kernel.jobs.start(subject, async () => ({ big: 'x'.repeat(10_000), i })).done;
    let finish!: () => void;
    const running = kernel.jobs.start(subject, () => new Promise<void>((resolve) => { finish = resolve; }));
    type Page = { jobs: JobRecord[]; next?: string };
    const page = async (query: string): Promise<Page> => (await (await get(url, `/api/jobs${query}`)).json()) as Page;
    const all = kernel.jobs.list().map((job) => job.id);
    expect(all).toHaveLength(6);
    const seen: string[] = [];
    let query = '?limit=4';
    for (;;) {
      const { jobs, next } = await page(query);
      seen.push(...jobs.map((job) => job.id));
      if (next === undefined) break;
      query = `?limit=4&before=${next}`;
    }
    expect(seen).toEqual(all);
    expect((await page('?state=running')).jobs.map((job) => job.id)).toEqual([running.record.id]);
    expect((await page('?state=ended')).jobs).toHaveLength(5);
    const lean = await page('?state=ended&results=false');
    expect(lean.jobs.every((job) => !('result' in job) && job.state === 'succeeded')).toBe(true);
    expect((await page('')).jobs.filter((job) => job.result !== undefined)).toHaveLength(5);
    for (const [bad, field] of [['state=done', 'state'], ['limit=0', 'limit'], ['limit=201', 'limit'], ['results=no', 'results'], ['before=', 'before']]) {
      const refused = await get(url, `/api/jobs?${bad}`);
      expect([bad, refused.status, ((await refused.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([bad, 400, field]);
    }
    finish();
    await running.done;
  });

  it('stops an import that is cancelled between chunks, says how far it came, and writes nothing after its answer', async () => {
    const { url, kernel } = await serve();
    const id = await notebook(url);
    const folder = await notesFolder();
    const { job } = (await (await post(url, '/api/actions/blocks/import/markdown', { notebook: id, path: folder })).json()) as { job: JobRecord };
    let cancelled = false;
    const events = await follow(url, job.id, async (event) => {
      if (event.event !== 'progress' || cancelled || (event.data.job as JobRecord).progress.done === 0) return;
      cancelled = true;
      const answer = (await (await post(url, `/api/jobs/${job.id}/cancel`, {})).json()) as { cancelling: boolean };
      expect(answer.cancelling).toBe(true);
    });
    const end = events.at(-1)!.data.job as JobRecord;
    const result = end.result as { documents: number; planned: number; stopped: string; message: string };
    expect(end.state).toBe('cancelled');
    expect(result.stopped).toBe('cancelled');
    expect(result.planned).toBe(DOCUMENTS);
    expect(result.documents).toBeGreaterThan(0);
    expect(result.documents).toBeLessThan(DOCUMENTS);
    expect(result.message).toBe(`imported ${result.documents} of ${DOCUMENTS} documents, cancelled; the rest was not written`);
    // What it says is what is there, and it stays so: nothing is written after the answer.
    expect(await documentFiles(kernel, id)).toBe(result.documents);
    await kernel.pipeline.call({ target: 'notebook_list', input: {}, principal: { kind: 'person', name: 'alice', role: 'admin' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await documentFiles(kernel, id)).toBe(result.documents);
    expect(await listed(url, id)).toBe(result.documents);
    // Answered, it is no crash's to undo: its records in the import journal are gone.
    expect(await readdir(join(kernel.workspace.privateDir, 'journal', 'imports'))).toEqual([]);
    const audit = (await readFile(join(kernel.workspace.root, 'audit', 'audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { action: string; outcome: string; details?: { stopped?: string } });
    expect(audit.filter((line) => line.action === 'markdown' && line.outcome === 'ok').at(-1)!.details).toEqual({ stopped: 'cancelled' });
  });

  it('stops an import at its time limit: the answer is what was written, never "failed" while it goes on', async () => {
    const { url, kernel } = await serve({ actions: { jobTimeoutMs: 10 } });
    const id = await notebook(url);
    const folder = await notesFolder();
    const answer = await post(url, '/api/actions/blocks/import/markdown', { notebook: id, path: folder }, { prefer: 'wait=60' });
    const job = await jobOf(url, answer);
    expect(job.state).toBe('timed_out');
    const written = await documentFiles(kernel, id);
    expect(written).toBeLessThan(DOCUMENTS);
    if (job.result !== undefined) {
      // Stopped after some chunks: a result that counts exactly what is on disk.
      expect(answer.status).toBe(200);
      expect(job.result).toMatchObject({ documents: written, stopped: 'time_limit' });
    } else {
      // Stopped before its first write: an error, and nothing written.
      expect([answer.status, job.error?.code, written]).toEqual([504, 'ACTION_TIMEOUT', 0]);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await documentFiles(kernel, id)).toBe(written);
  });

  it('sends MCP progress notifications for a long call when the client asks, and cancels the job when the client does', async () => {
    const { url, kernel } = await serve();
    const id = await notebook(url);
    const client = await connectMcp(url, ADMIN, 'jobs-test');
    try {
      const seen: { progress: number; total?: number }[] = [];
      const result = await client.callTool({ name: 'import_markdown', arguments: { notebook: id, path: await notesFolder(200) } }, undefined, { onprogress: (progress) => seen.push(progress) });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ documents: 200 });
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.at(-1)).toMatchObject({ progress: 200, total: 200 });
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
      // A cancelled MCP request cancels the job at its next safe point.
      const controller = new AbortController();
      const big = await notesFolder();
      const other = await notebook(url);
      const pending = client.callTool({ name: 'import_markdown', arguments: { notebook: other, path: big } }, undefined, {
        signal: controller.signal,
        onprogress: (progress) => { if (progress.progress > 0) controller.abort(); },
      }).catch((error: unknown) => error);
      expect(await pending).toBeInstanceOf(Error);
      const job = await waitForEnd(kernel, 'import_markdown', other);
      expect(job.state).toBe('cancelled');
      expect(await documentFiles(kernel, other)).toBe((job.result as { documents: number }).documents);
    } finally {
      await client.close();
    }
  });

  it('stops a short call at its time limit over HTTP and MCP: the answer and the audit say what it wrote, and it writes no more', async () => {
    const out = await harness.tempDir('quire-writer-');
    const { url, kernel } = await serve({ actions: { timeoutMs: 100 }, plugins: { writer: { trusted: true } } }, undefined, { writer: slowWriter(out) });
    const answer = await post(url, '/api/actions/writer/files/write', { count: 1000, prefix: 'http' });
    expect(answer.status).toBe(200);
    const { result } = (await answer.json()) as { result: { written: number; stopped: string; message: string } };
    expect(result.stopped).toBe('time_limit');
    expect(result.written).toBeGreaterThan(0);
    expect(result.written).toBeLessThan(1000);
    const onDisk = async (prefix: string) => (await readdir(out)).filter((name) => name.startsWith(prefix)).length;
    expect(await onDisk('http')).toBe(result.written);
    const client = await connectMcp(url, ADMIN, 'jobs-test');
    const overMcp = await client.callTool({ name: 'files_write', arguments: { count: 1000, prefix: 'mcp' } });
    await client.close();
    expect(overMcp.isError).toBeFalsy();
    const mcpResult = overMcp.structuredContent as { written: number; stopped: string };
    expect(mcpResult.stopped).toBe('time_limit');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([await onDisk('http'), await onDisk('mcp')]).toEqual([result.written, mcpResult.written]);
    const audit = (await readFile(join(kernel.workspace.root, 'audit', 'audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { plugin: string; outcome: string; details?: unknown });
    expect(audit.filter((line) => line.plugin === 'writer').map((line) => [line.outcome, line.details])).toEqual([['ok', { stopped: 'time_limit' }], ['ok', { stopped: 'time_limit' }]]);
  });

  it('lets the agent wait for a job like any call, and shows its job and progress in the turn\'s events', async () => {
    const { url, kernel } = await serve({ agent: { requireSnapshot: false } });
    const id = await notebook(url);
    const folder = await notesFolder(300);
    kernel.container.registerInstance(MODEL_PROVIDER, scriptedProvider([toolCalls({ id: 'c1', name: 'import_markdown', args: { notebook: id, path: folder } }), answer('Imported.')]));
    const session = ((await (await post(url, '/api/agent/sessions', {})).json()) as { session: { id: string } }).session.id;
    await fetch(`${url}/api/agent/sessions/${session}/mode`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'auto' }) });
    const events = await readEvents(await post(url, `/api/agent/sessions/${session}/turns`, { message: 'import my notes' }));
    const names = events.map((event) => event.event);
    expect(names.indexOf('job')).toBeGreaterThan(names.indexOf('tool_call'));
    expect(names.lastIndexOf('progress')).toBeLessThan(names.indexOf('tool_result'));
    const job = events.find((event) => event.event === 'job')!.data as { jobID: string; action: string; toolCallID: string };
    expect(job).toMatchObject({ action: 'import_markdown', toolCallID: 'c1' });
    const progress = events.filter((event) => event.event === 'progress').map((event) => (event.data.progress as { done: number }).done);
    expect(progress.at(-1)).toBe(300);
    const result = events.find((event) => event.event === 'tool_result')!.data as { ok: boolean; output: string };
    expect(result.ok).toBe(true);
    expect(result.output).toContain('"documents":300');
    const record = ((await (await get(url, `/api/jobs/${job.jobID}`)).json()) as { job: JobRecord }).job;
    expect(record).toMatchObject({ state: 'succeeded', sessionId: session, startedBy: `agent:${session}/${record.turnId}/c1` });
    expect(await documentFiles(kernel, id)).toBe(300);
  });

  it('marks a job that was running when the kernel stopped as interrupted, with how far it came', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    await mkdir(join(workspace, 'jobs'), { recursive: true });
    const running: JobRecord = {
      id: '20261130120000-abcdefg', action: 'import_markdown', plugin: 'blocks', tool: 'import', name: 'markdown', startedBy: 'alice',
      state: 'running', created: '2026-11-30T12:00:00.000Z', updated: '2026-11-30T12:00:05.000Z', progress: { done: 128, total: 1515 },
    };
    await writeFile(join(workspace, 'jobs', `${running.id}.json`), JSON.stringify(running));
    // And one whose action said what a crash makes of its work (an import: undone at the next start).
    const undone: JobRecord = { ...running, id: '20261130120001-abcdefg', progress: { done: 64, total: 84, message: 'documents imported', ifInterrupted: 'undone at the next start' } };
    await writeFile(join(workspace, 'jobs', `${undone.id}.json`), JSON.stringify(undone));
    const { url } = await serve({}, workspace);
    const { job } = (await (await get(url, `/api/jobs/${running.id}`)).json()) as { job: JobRecord };
    expect(job).toMatchObject({ state: 'interrupted', error: { code: 'JOB_INTERRUPTED' }, progress: { done: 128, total: 1515 } });
    expect(job.error!.message).toBe('the kernel stopped while this job ran; it had done 128 of 1515');
    const other = ((await (await get(url, `/api/jobs/${undone.id}`)).json()) as { job: JobRecord }).job;
    expect(other.error!.message).toBe('the kernel stopped while this job ran; it had done 64 of 84; undone at the next start');
    const events = await follow(url, running.id);
    expect(events.map((event) => event.event)).toEqual(['job', 'end']);
  });

  it('rolls a stopped rebuild back whole, so the index stays as it was and healthy', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const first = await serve({}, workspace);
    const id = await notebook(first.url);
    await post(first.url, '/api/actions/blocks/import/markdown', { notebook: id, path: await notesFolder() }, { prefer: 'wait=60' });
    await servers.pop()!.close();
    await first.kernel.close();
    // The same workspace, with a job limit far shorter than a rebuild of it takes.
    const { url, kernel } = await serve({ actions: { jobTimeoutMs: 10 } }, workspace);
    const count = await documentFiles(kernel, id);
    expect(count).toBe(DOCUMENTS);
    const rebuild = await post(url, '/api/actions/blocks/index/rebuild', {}, { prefer: 'wait=60' });
    const job = await jobOf(url, rebuild);
    expect([rebuild.status, job.state, job.error?.code]).toEqual([504, 'timed_out', 'ACTION_TIMEOUT']);
    expect(await listed(url, id)).toBe(count);
    const search = await post(url, '/api/actions/search-fulltext/search/fulltext', { query: 'agent reads' });
    expect(((await search.json()) as { result: { total: number } }).result.total).toBeGreaterThanOrEqual(count);
  });
});

/** The newest job of an action into a notebook, once it has ended. */
async function waitForEnd(kernel: Kernel, action: string, notebook: string): Promise<JobRecord> {
  for (let i = 0; i < 600; i++) {
    const job = kernel.jobs.list().find((item) => item.action === action && (item.result as { notebook?: string } | undefined)?.notebook === notebook);
    if (job && job.state !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${action} job into ${notebook} ended`);
}

/** A user plugin whose write action writes files one by one and honours its stop between them. */
function slowWriter(folder: string): UserPlugin {
  return {
    manifest: {
      id: 'writer', version: '1.0.0', kernel: '^0.1.0', description: 'writes files slowly', entry: 'main.js',
      tools: [{ name: 'files', description: 'files', actions: {
        write: { description: 'writes count files, one every 5 ms', effects: ['localWrite'], input: { type: 'object', required: ['count', 'prefix'], properties: { count: { type: 'integer' }, prefix: { type: 'string' } } } },
      } }],
    },
    entry: 'main.js',
    code: `import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
export default {
  activate() {
    return { files: { write: async (input, call) => {
      for (let i = 0; i < input.count; i++) {
        if (call.stopped) return { written: i, stopped: call.stopped, message: 'wrote ' + i + ' of ' + input.count };
        await writeFile(join(${JSON.stringify(folder)}, input.prefix + '-' + i), 'x');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { written: input.count };
    } } };
  },
};`,
  };
}
