import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { Kernel } from '../../../core/kernel.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';

const ADMIN = 'qk_out-of-process-admin';
const READER = 'qk_out-of-process-reader';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN) }, { name: 'rita', role: 'reader', sha256: sha(READER) }] };

/** A user plugin of one tool whose actions are given as source text of handler functions. */
function plugin(id: string, actions: Record<string, { code: string; effects?: string[] }>, activate = '', requires: string[] = []): UserPlugin {
  const declared = Object.fromEntries(Object.entries(actions).map(([name, action]) => [name, { description: `${name} action`, input: { type: 'object' }, effects: action.effects ?? [] }]));
  const handlers = Object.entries(actions).map(([name, action]) => `      ${name}: ${action.code},`).join('\n');
  return {
    manifest: { id, version: '1.0.0', kernel: '^0.1.0', description: `fixture ${id}`, entry: 'index.js', requires, tools: [{ name: id.replace(/-/g, '_'), description: 'x', actions: declared }] },
    code: `import fs from 'node:fs';\nimport os from 'node:os';\nimport net from 'node:net';\nexport default {\n  async activate(ctx) {\n${activate}\n    return { ${id.replace(/-/g, '_')}: {\n${handlers}\n    } };\n  },\n};\n`,
  };
}

const hello = { code: '() => ({ hi: true })' };

interface Listed { id: string; state: string; problems?: { code: string }[]; process?: { state: string; restarts: number; pid?: number; sandbox?: { permissions: boolean; network: string } } }

/** Processes on this machine whose command line names the folder (Linux: /proc). */
function processesNaming(folder: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(folder)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('untrusted user plugins run in a process of their own', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(userPlugins: Record<string, UserPlugin>, config: KernelConfigFile = {}): Promise<{ kernel: Kernel; url: string }> {
    const kernel = await harness.boot({ config: { auth, ...config }, userPlugins });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, url: server.url };
  }

  async function call(url: string, path: string, token = ADMIN): Promise<{ status: number; body: { result?: unknown; error?: { code: string; details: Record<string, unknown> } } }> {
    const response = await fetch(`${url}/api/actions/${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    return { status: response.status, body: await response.json() as { result?: unknown } };
  }

  async function listed(url: string, id: string): Promise<Listed | undefined> {
    const response = await fetch(`${url}/api/plugins`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return (await response.json() as { plugins: Listed[] }).plugins.find((entry) => entry.id === id);
  }

  it('answers no capability method once its call has ended, and believes no error code the process makes up', async () => {
    const start = `() => { setTimeout(() => ctx.get('core.audit-head').current().then(() => { late = 'answered'; }, (error) => { late = error.message; }), 50); return {}; }`;
    const spoof = "    process.send({ type: 'activation-failed', phase: 'activate', error: { message: 'you are signed out', code: 'UNAUTHENTICATED', kernel: true } });\n    await new Promise(() => {});";
    const { url } = await serve({
      lingerer: plugin('lingerer', { start: { code: start }, report: { code: '() => ({ late })' } }, '    let late = null;', ['core.audit-head']),
      spoofer: plugin('spoofer', { hello }, spoof),
    });
    expect((await call(url, 'lingerer/lingerer/start')).status).toBe(200);
    let late: unknown = null;
    for (let tries = 0; late === null && tries < 300; tries++) {
      late = ((await call(url, 'lingerer/lingerer/report')).body.result as { late: unknown }).late;
      if (late === null) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(late).toEqual(expect.stringContaining('none is running'));
    expect((await listed(url, 'spoofer'))?.problems?.map((problem) => problem.code)).toEqual(['PLUGIN_ACTIVATION_FAILED']);
  });

  it('answers the status a plugin gives its Error by code, with its details, in its own process and in the kernel\'s; other codes are 500', async () => {
    const actions = {
      missing: { code: "() => { throw Object.assign(new Error('no item with that id'), { code: 'NOT_FOUND', details: { id: 'x1' } }); }" },
      bad: { code: "() => { throw Object.assign(new Error('the name is too long'), { code: 'INVALID_INPUT', details: { field: 'name' } }); }" },
      node: { code: "() => { throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' }); }" },
      spoof: { code: "() => { throw Object.assign(new Error('sign in again'), { code: 'UNAUTHENTICATED' }); }" },
    };
    const { url } = await serve({ apart: plugin('apart', actions), inside: plugin('inside', actions) }, { plugins: { inside: { trusted: true } } });
    for (const id of ['apart', 'inside']) {
      const missing = await call(url, `${id}/${id}/missing`);
      expect([id, missing.status, missing.body.error]).toEqual([id, 404, expect.objectContaining({ code: 'NOT_FOUND', details: expect.objectContaining({ id: 'x1', plugin: id }) })]);
      const bad = await call(url, `${id}/${id}/bad`);
      expect([id, bad.status, bad.body.error?.details.field]).toEqual([id, 400, 'name']);
      // Node's own code, and one a plugin may not raise (a 401 would make a client drop a good token).
      for (const action of ['node', 'spoof']) {
        const other = await call(url, `${id}/${id}/${action}`);
        expect([id, action, other.status, other.body.error?.code]).toEqual([id, action, 500, 'PLUGIN_ERROR']);
      }
      expect((await call(url, `${id}/${id}/node`)).body.error?.details.errorCode).toBe('ENOENT');
    }
  });

  it('ends a process that writes bytes of its own making to its message pipe, and goes on serving', async () => {
    // A frame that does not deserialize, and one that claims 4 GB: Node's IPC channel threw in its own
    // read callback on the first (ending the kernel), and buffered the second.
    const frame = (length: number) => `() => { const bytes = Buffer.alloc(20, 0xff); bytes.writeUInt32BE(${length}, 0); fs.writeSync(3, bytes); return new Promise(() => {}); }`;
    const { url } = await serve({ scribbler: plugin('scribbler', { garbage: { code: frame(16) }, huge: { code: frame(0xffffffff) }, hello }), good: plugin('good', { hello }) });
    for (const action of ['garbage', 'huge']) {
      const answer = await call(url, `scribbler/scribbler/${action}`);
      expect([action, answer.body.error?.code]).toEqual([action, 'PLUGIN_ERROR']);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(await call(url, 'good/good/hello')).toEqual({ status: 200, body: { result: { hi: true } } });
      // Started again after the crash's backoff (calls meanwhile are told to retry), and answering.
      let again = await call(url, 'scribbler/scribbler/hello');
      for (let tries = 0; again.status !== 200 && tries < 300; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await call(url, 'scribbler/scribbler/hello');
      }
      expect(again).toEqual({ status: 200, body: { result: { hi: true } } });
    }
  });

  it('refuses a plugin whose activate busy-loops past its time limit, ends its process, and serves the rest', async () => {
    const { kernel, url } = await serve({
      spinner: plugin('spinner', { hello }, '    for (;;) { /* never yields */ }'),
      good: plugin('good', { hello }),
    // Long enough for the good plugin's process to start on a loaded machine: only the spinner waits it out.
    }, { pluginHost: { activationTimeoutMs: 5000 } });
    expect((await listed(url, 'spinner'))?.problems?.map((problem) => problem.code)).toEqual(['PLUGIN_ACTIVATION_TIMEOUT']);
    expect(processesNaming(join(kernel.workspace.pluginsDir, 'spinner'))).toEqual([]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(await call(url, 'good/good/hello')).toEqual({ status: 200, body: { result: { hi: true } } });
  });

  it('kills a call that busy-loops at its time limit (504, not still running) and answers the next call', async () => {
    const { url } = await serve({ spin: plugin('spin', { loop: { code: '() => { for (;;) { /* never yields */ } }' }, hello }) }, { actions: { timeoutMs: 1000 } });
    const stuck = await call(url, 'spin/spin/loop');
    expect([stuck.status, stuck.body.error?.code, stuck.body.error?.details.stillRunning]).toEqual([504, 'ACTION_TIMEOUT', false]);
    // Restarted before the next call, whose own 1 s limit would otherwise also cover the new process's start.
    await expect.poll(async () => (await listed(url, 'spin'))?.process, { timeout: 15_000 }).toMatchObject({ state: 'running', restarts: 1 });
    expect(await call(url, 'spin/spin/hello')).toEqual({ status: 200, body: { result: { hi: true } } });
  });

  it('keeps a plugin that declares no effects from writing files, whoever calls it', async () => {
    const { kernel, url } = await serve({
      scribbler: plugin('scribbler', {
        write_here: { code: `() => { fs.writeFileSync('here.txt', 'written'); return { wrote: true }; }` },
        write_tmp: { code: `() => { fs.writeFileSync(os.tmpdir() + '/quire-scribbler.txt', 'written'); return { wrote: true }; }` },
      }),
    });
    for (const action of ['write_here', 'write_tmp']) {
      const answer = await call(url, `scribbler/scribbler/${action}`);
      expect([answer.status, answer.body.error?.code, answer.body.error?.details.errorCode]).toEqual([500, 'PLUGIN_ERROR', 'ERR_ACCESS_DENIED']);
      expect((await call(url, `scribbler/scribbler/${action}`, READER)).body.error?.code).toBe('FORBIDDEN');
    }
    expect(existsSync(join(kernel.workspace.root, 'here.txt'))).toBe(false);
  });

  it('keeps a plugin that declares no effects from writing into the workspace by its path', async () => {
    const harnessWorkspace = join(await harness.tempDir(), 'workspace');
    const target = join(harnessWorkspace, 'data', 'planted.txt');
    const code = `() => { fs.mkdirSync(${JSON.stringify(join(harnessWorkspace, 'data'))}, { recursive: true }); fs.writeFileSync(${JSON.stringify(target)}, 'written'); return { wrote: true }; }`;
    const kernel = await harness.boot({ workspace: harnessWorkspace, config: { auth }, userPlugins: { planter: plugin('planter', { plant: { code } }) } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const answer = await call(server.url, 'planter/planter/plant');
    expect([answer.status, answer.body.error?.code, answer.body.error?.details.errorCode]).toEqual([500, 'PLUGIN_ERROR', 'ERR_ACCESS_DENIED']);
    expect((await call(server.url, 'planter/planter/plant', READER)).status).toBe(403);
    expect(existsSync(target)).toBe(false);
  });

  it('survives a plugin that crashes: its call fails, its process is restarted and listed, the next call works', async () => {
    const { url } = await serve({
      crashy: plugin('crashy', {
        throw_later: { code: `() => new Promise(() => { setTimeout(() => { throw new Error('uncaught in the plugin'); }, 0); })` },
        exit: { code: '() => process.exit(3)' },
        hello,
      }),
    });
    const thrown = await call(url, 'crashy/crashy/throw_later');
    expect([thrown.status, thrown.body.error?.code]).toEqual([500, 'PLUGIN_ERROR']);
    // A restart waits 250 ms, then starts a process: more than the poll's default second on a loaded machine.
    await expect.poll(async () => (await listed(url, 'crashy'))?.process, { timeout: 15_000 }).toMatchObject({ state: 'running', restarts: 1 });
    expect(await call(url, 'crashy/crashy/hello')).toEqual({ status: 200, body: { result: { hi: true } } });
    const exited = await call(url, 'crashy/crashy/exit');
    expect([exited.status, exited.body.error?.code]).toEqual([500, 'PLUGIN_ERROR']);
    await expect.poll(async () => (await listed(url, 'crashy'))?.process, { timeout: 15_000 }).toMatchObject({ state: 'running', restarts: 2 });
    expect(await call(url, 'crashy/crashy/hello')).toEqual({ status: 200, body: { result: { hi: true } } });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('backs off from a plugin that dies a moment after each activation (it was started again every 400 ms for ever)', async () => {
    const { url } = await serve({ shortlived: plugin('shortlived', { hello }, '    setTimeout(() => process.exit(1), 50);') });
    // The fourth crash's restart, as scheduled: by then the wait has doubled three times (250 ms → 2 s).
    type Restarting = { state: string; restarts: number; lastExit?: { at: string }; nextStartAt?: string };
    let seen: Restarting | undefined;
    for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 25))) {
      const current = (await listed(url, 'shortlived'))?.process as Restarting | undefined;
      if (current?.state === 'restarting' && current.restarts >= 3 && current.lastExit && current.nextStartAt) { seen = current; break; }
    }
    expect(seen).toBeDefined();
    expect(Date.parse(seen!.nextStartAt!) - Date.parse(seen!.lastExit!.at)).toBeGreaterThanOrEqual(1_900);
    // A call meanwhile is told to come back, not that the plugin failed.
    const waiting = await fetch(`${url}/api/actions/shortlived/shortlived/hello`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{}' });
    expect([waiting.status, ((await waiting.json()) as { error: { code: string } }).error.code, Number(waiting.headers.get('retry-after'))]).toEqual([503, 'NOT_READY', expect.any(Number)]);
  });

  it('gives it only what its manifest requires: kernel information as data, not the workspace path, env or folder', async () => {
    process.env.QUIRE_TEST_KERNEL_SECRET = 'kernel-only';
    const probe = `async () => {
      let workspace;
      try { ctx.get('core.workspace'); workspace = 'given'; } catch (error) { workspace = error.code; }
      let undeclared;
      try { ctx.get('core.audit-head'); undeclared = 'given'; } catch (error) { undeclared = error.code; }
      return { version: ctx.get('core.kernel-info').version, workspace, undeclared, env: process.env.QUIRE_TEST_KERNEL_SECRET ?? null, cwd: fs.readdirSync('.') };
    }`;
    const { kernel, url } = await serve({ prober: plugin('prober', { probe: { code: probe } }, '', ['core.kernel-info', 'core.workspace']) });
    const answer = await call(url, 'prober/prober/probe');
    expect(answer).toEqual({ status: 200, body: { result: { version: (await (await fetch(`${url}/healthz`)).json() as { version: string }).version, workspace: 'CAPABILITY_DENIED', undeclared: 'CAPABILITY_DENIED', env: null, cwd: [] } } });
    expect(kernel.plugins.isActive('prober')).toBe(true);
  });

  it('is offered no method of the blocks index that takes a function: a listener registered from there broke every later document change', async () => {
    const arm = `async () => {
      const index = ctx.get('blocks.index');
      const tried = {};
      for (const method of ['onBeforeChange', 'onIndexed', 'withWritesPaused']) {
        if (typeof index[method] !== 'function') { tried[method] = 'not offered'; continue; }
        try { await index[method](1); tried[method] = 'called'; } catch (error) { tried[method] = error.code ?? String(error); }
      }
      return tried;
    }`;
    const kernel = await harness.boot({ realManifests: true, config: { auth, plugins: { blocks: { config: { watch: false, welcome: false } } } }, userPlugins: { poison: plugin('poison', { arm: { code: arm } }, '', ['blocks.index']) } });
    const agent = { kind: 'person' as const, name: 'alice', role: 'admin' as const };
    const act = async <T>(target: string, input: Record<string, unknown>): Promise<T> => {
      const outcome = await kernel.pipeline.call({ target, input, principal: agent });
      if (outcome.status !== 'ok') throw new Error(`${target}: ${outcome.status}`);
      return outcome.value as T;
    };
    const notebook = await act<{ id: string }>('notebook_create', { name: 'N' });
    const doc = await act<{ id: string }>('document_create', { notebook: notebook.id, title: 'Doc', markdown: 'first' });
    expect(await act('poison_arm', {})).toEqual({ onBeforeChange: 'not offered', onIndexed: 'not offered', withWritesPaused: 'not offered' });
    await act('block_append', { parentId: doc.id, markdown: 'after' });
    await act('document_rename', { id: doc.id, title: 'Renamed' });
    expect((await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown).toContain('after');
  });

  it('cuts the network of a plugin that declares no dataEgress, at the process where the system allows it', async () => {
    const { url } = await serve({ cutoff: plugin('cutoff', { interfaces: { code: '() => Object.keys(os.networkInterfaces())' } }) });
    const sandbox = (await listed(url, 'cutoff'))?.process?.sandbox;
    expect(sandbox?.permissions).toBe(true);
    const answer = await call(url, 'cutoff/cutoff/interfaces');
    expect(answer.status).toBe(200);
    // Where unprivileged user namespaces are refused the in-process guard is what remains (README says so).
    if (sandbox?.network === 'cut') expect(answer.body.result).toEqual([]);
    else expect(sandbox?.network).toBe('guarded');
  });

  it('refuses a connection from what a dataEgress action left running once it answered: a later action without that effect cannot send through it', async () => {
    const received: string[] = [];
    const server: Server = createServer((socket) => { socket.on('data', (chunk) => received.push(chunk.toString())); socket.end(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const activate = '    const queue = [];\n    let refused = [];';
      const open = `() => {
        setInterval(() => {
          while (queue.length) {
            const text = queue.shift();
            try {
              const socket = net.connect(${port}, '127.0.0.1', () => { socket.end(text); });
              socket.on('error', (error) => refused.push(error.code));
            } catch (error) { refused.push(error.code); }
          }
        }, 20);
        return { started: true };
      }`;
      const { url } = await serve({ leaky: plugin('leaky', {
        open: { code: open, effects: ['dataEgress'] },
        quiet: { code: '(input) => { queue.push(input.secret ?? "private note text"); return { queued: true }; }', effects: ['localWrite'] },
        refusals: { code: '() => refused' },
      }, activate) }, { plugins: { leaky: { config: {} } } });
      expect((await call(url, 'leaky/leaky/open')).status).toBe(200);
      expect((await call(url, 'leaky/leaky/quiet')).status).toBe(200);
      await expect.poll(async () => (await call(url, 'leaky/leaky/refusals')).body.result, { timeout: 5_000 }).toEqual(['EGRESS_DENIED']);
      expect(received).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a connection opened in activate, outside any action, even when another action declares dataEgress', async () => {
    let connections = 0;
    const server: Server = createServer((socket) => { connections += 1; socket.destroy(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const activate = `    let opened;
    try { await new Promise((resolve, reject) => { const socket = net.connect(${port}, '127.0.0.1', () => { socket.destroy(); resolve(); }); socket.on('error', reject); }); opened = 'connected'; } catch (error) { opened = error.code; }`;
      const { url } = await serve({ phoner: plugin('phoner', { status: { code: '() => ({ opened })' }, send: { code: '() => ({})', effects: ['dataEgress'] } }, activate) });
      expect(await call(url, 'phoner/phoner/status')).toEqual({ status: 200, body: { result: { opened: 'EGRESS_DENIED' } } });
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('effects of a plugin in its own process', () => {
  const harness = useHarness();
  const admin = { kind: 'person', name: 'admin', role: 'admin' } as const;

  it('refuses and audits a request from an action without dataEgress, the process keeping the network for one that declares it', async () => {
    const fetchIt = `async (input) => { try { await fetch(input.url); return { reached: true }; } catch (error) { return { refused: error.code }; } }`;
    const kernel = await harness.boot({ userPlugins: { caller: plugin('caller', { quiet: { code: fetchIt }, loud: { code: fetchIt, effects: ['dataEgress'] } }) } });
    expect(kernel.plugins.processOf('caller')?.sandbox?.network).toBe('guarded');
    const outcome = await kernel.pipeline.call({ target: 'caller_quiet', input: { url: 'http://127.0.0.1:9/' }, principal: admin });
    expect(outcome).toMatchObject({ status: 'ok', value: { refused: 'EGRESS_DENIED' } });
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { action: string; outcome: string; details?: { target?: string } });
    expect(lines.filter((line) => line.outcome === 'egress_denied').map((line) => [line.action, line.details?.target])).toEqual([['quiet', 'http://127.0.0.1:9']]);
  });

  it('lets a plugin declaring localWrite write in its own working folder only', async () => {
    const workspace = join(await harness.tempDir(), 'workspace');
    const code = `() => {
      fs.writeFileSync('scratch.txt', 'mine');
      let outside;
      try { fs.writeFileSync(${JSON.stringify(join(workspace, 'outside.txt'))}, 'x'); outside = 'written'; } catch (error) { outside = error.code; }
      return { scratch: fs.readFileSync('scratch.txt', 'utf8'), outside };
    }`;
    const kernel = await harness.boot({ workspace, userPlugins: { writer: plugin('writer', { write: { code, effects: ['localWrite'] } }) } });
    expect(kernel.plugins.processOf('writer')?.sandbox?.writes).toBe('scratch');
    expect(await kernel.pipeline.call({ target: 'writer_write', input: {}, principal: admin })).toMatchObject({ status: 'ok', value: { scratch: 'mine', outside: 'ERR_ACCESS_DENIED' } });
    expect(existsSync(join(workspace, 'outside.txt'))).toBe(false);
  });
});

describe('a call to a plugin in its own process', () => {
  const harness = useHarness();
  const admin = { kind: 'person', name: 'admin', role: 'admin' } as const;
  const patient = {
    // Reads its signal first: the kernel learns it watches before the progress it reports.
    wait: { code: `(_input, call) => new Promise((resolve) => { call.signal.addEventListener('abort', () => resolve({ stopped: call.stopped, code: call.signal.reason.code })); call.progress({ done: 1, total: 2, message: 'half' }); })` },
    hello,
  };

  it('stops a handler that watches its signal by telling it, and answers what it said', async () => {
    // The limit must leave room for the handler's 'watching' to reach the kernel first, or the process is ended instead.
    const kernel = await harness.boot({ config: { actions: { timeoutMs: 2000 } }, userPlugins: { patient: plugin('patient', patient) } });
    const progress: unknown[] = [];
    expect(await kernel.pipeline.call({ target: 'patient_wait', input: {}, principal: admin, onProgress: (update) => progress.push(update) }))
      .toMatchObject({ status: 'ok', value: { stopped: 'time_limit', code: 'ACTION_TIMEOUT' } });
    expect(progress).toEqual([{ done: 1, total: 2, message: 'half' }]);
    const controller = new AbortController();
    const pending = kernel.pipeline.call({ target: 'patient_wait', input: {}, principal: admin, signal: controller.signal, onProgress: () => controller.abort() });
    expect(await pending).toMatchObject({ status: 'ok', value: { stopped: 'cancelled', code: 'ACTION_CANCELLED' } });
    // Stopped by itself: its process was not ended.
    expect(kernel.plugins.processOf('patient')?.restarts).toBe(0);
  });

  it('calls the methods of a required capability in the kernel and answers with their result', async () => {
    const code = `async () => ctx.get('core.audit-head').current()`;
    const kernel = await harness.boot({ userPlugins: { header: plugin('header', { head: { code } }, '', ['core.audit-head']) } });
    const before = kernel.audit.currentHead();
    const outcome = await kernel.pipeline.call({ target: 'header_head', input: {}, principal: admin });
    expect(outcome).toMatchObject({ status: 'ok', value: before });
  });

  it('disposes the plugin in its process and ends the process when the kernel closes', async () => {
    const kernel = await harness.boot({ userPlugins: { closer: plugin('closer', { hello }) } });
    const pid = kernel.plugins.processOf('closer')?.pid;
    expect(pid).toBeGreaterThan(0);
    await kernel.close();
    expect(kernel.plugins.processOf('closer')).toBeUndefined();
    expect(processesNaming(join(kernel.workspace.pluginsDir, 'closer'))).toEqual([]);
  });
});
