import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, useHarness, writeUserPlugin } from '../../helpers/harness.js';

const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  stderr: () => string;
}

/** Runs the built CLI with plain node, as the README does, and waits for it to listen. */
function startServe(args: string[], expectToken: boolean, cwd = REPO_ROOT): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 15_000);
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1] && (!expectToken || /\n {2}qk_\S+\n/.test(out))) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stdout: () => out, stderr: () => err });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${String(code)}: ${err}`)));
  });
}

/** Runs the built CLI to its end (a start that fails), keeping what it printed. */
function runToExit(args: string[], children: ChildProcessWithoutNullStreams[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('quire serve (built, run with plain node)', () => {
  const harness = useHarness();
  const children: ChildProcessWithoutNullStreams[] = [];
  // Gone before the harness removes their folders (after-hooks run last registered first).
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return exited;
    }));
  });

  it('creates the workspace with --init, binds to 127.0.0.1, prints the admin token once and stores it with mode 0600', async () => {
    expect(existsSync(CLI), 'run `npm run build` first (npm test does)').toBe(true);
    const workspace = join(await harness.tempDir(), 'workspace');
    const first = await startServe(['--workspace', workspace, '--init'], true);
    expect(first.stdout()).toContain(workspace);
    children.push(first.child);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = /\n {2}(qk_\S+)\n/.exec(first.stdout())?.[1] ?? '';
    expect(token).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);
    const tokenFile = join(workspace, '.quire', 'admin.token');
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await readFile(tokenFile, 'utf8')).trim()).toBe(token);
    const config = await readFile(join(workspace, 'quire.json'), 'utf8');
    expect(config).not.toContain(token);
    const plugins = await fetch(`${first.url}/api/plugins`, { headers: { authorization: `Bearer ${token}` } });
    expect(plugins.status).toBe(200);
    expect(((await plugins.json()) as { plugins: { id: string }[] }).plugins.map((plugin) => plugin.id)).toContain('system');
    expect(await stop(first.child)).toBe(0);

    const second = await startServe(['--workspace', workspace], false);
    children.push(second.child);
    expect(second.stdout()).not.toContain('Admin token');
    const again = await fetch(`${second.url}/api/actions/system/system/info`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(200);
    expect(await stop(second.child)).toBe(0);
  });

  it('stops with exit code 2 on a --workspace folder that does not exist, asks for --init, and creates nothing', async () => {
    const typo = join(await harness.tempDir(), 'workspcae');
    const run = await runToExit(['serve', '--workspace', typo, '--port', '0'], children);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--init');
    expect(existsSync(typo)).toBe(false);
  });

  it('creates the default ./workspace when no --workspace is given, as npm start does on a fresh clone', async () => {
    const folder = await harness.tempDir();
    const started = await startServe([], true, folder);
    children.push(started.child);
    expect(existsSync(join(folder, 'workspace', 'quire.json'))).toBe(true);
    expect(started.stdout()).toContain(join(folder, 'workspace'));
    expect(await stop(started.child)).toBe(0);
  });

  it('shows the generated admin token even when the port is busy on first start, names the port and --port, and exits 1', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as AddressInfo).port;
      const workspace = join(await harness.tempDir(), 'workspace');
      const run = await runToExit(['serve', '--workspace', workspace, '--init', '--port', String(port)], children);
      expect(run.code).toBe(1);
      const token = /\n {2}(qk_\S+)\n/.exec(run.stdout)?.[1];
      expect(token).toMatch(/^qk_/);
      expect((await readFile(join(workspace, '.quire', 'admin.token'), 'utf8')).trim()).toBe(token);
      expect(run.stderr).toContain(String(port));
      expect(run.stderr).toContain('--port');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('shows the admin token a first start generated before a plugin\'s config stopped it (no later start would)', async () => {
    const workspace = join(await harness.tempDir(), 'workspace');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'quire.json'), JSON.stringify({ plugins: { providers: { config: { model: { provider: 'openai-chatt', model: 'm' } } } } }));
    const run = await runToExit(['serve', '--workspace', workspace, '--port', '0'], children);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('PLUGIN_CONFIG_INVALID');
    const token = /\n {2}(qk_\S+)\n/.exec(run.stdout)?.[1];
    expect(token).toMatch(/^qk_/);
    expect((await readFile(join(workspace, '.quire', 'admin.token'), 'utf8')).trim()).toBe(token);
    // A failure before the plugins start (the usage ledger's file cannot be opened: a folder in its place) too.
    const early = join(await harness.tempDir(), 'workspace');
    await mkdir(join(early, '.quire', 'usage.db'), { recursive: true });
    await writeFile(join(early, 'quire.json'), '{}');
    const second = await runToExit(['serve', '--workspace', early, '--port', '0'], children);
    expect(second.code).toBe(1);
    expect(/\n {2}(qk_\S+)\n/.exec(second.stdout)?.[1]).toBe((await readFile(join(early, '.quire', 'admin.token'), 'utf8')).trim());
  });

  it('stops in order, naming the plugin, when a trusted plugin throws outside any call (it died mid-request, leaving serve.json)', async () => {
    const workspace = join(await harness.tempDir(), 'workspace');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'quire.json'), JSON.stringify({ plugins: { stray: { trusted: true } } }));
    const manifest = {
      id: 'stray', version: '1.0.0', kernel: '^0.1.0', description: 'A plugin with a careless timer', entry: 'index.js',
      tools: [{ name: 'stray', description: 'x', actions: { later: { description: 'Answers, then throws from a timer', input: { type: 'object' }, effects: [] } } }],
    };
    await writeUserPlugin(workspace, 'stray', { manifest, code: 'export default { activate() { return { stray: { later: () => { setTimeout(() => { throw new Error("forgot to catch this"); }, 20); return "answered"; } } }; } };' });
    const started = await startServe(['--workspace', workspace], true);
    children.push(started.child);
    const exited = new Promise<number | null>((resolve) => { started.child.removeAllListeners('exit'); started.child.on('exit', resolve); });
    const token = /\n {2}(qk_\S+)\n/.exec(started.stdout())?.[1] ?? '';
    const response = await fetch(`${started.url}/api/actions/stray/stray/later`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(await response.json()).toEqual({ result: 'answered' });
    expect(await exited).toBe(1);
    expect(started.stderr()).toMatch(/plugin 'stray' threw outside any call \(Error: forgot to catch this; at .*index\.js/);
    expect(started.stderr()).toMatch(/run it untrusted/);
    expect(started.stdout()).toMatch(/Stopping…/);
    // Closed in order: where it served is not left behind for clients to find.
    expect(existsSync(join(workspace, '.quire', 'serve.json'))).toBe(false);
  });

  it('starts despite a refused user plugin and a misspelt deny rule, and reports both on start', async () => {
    const workspace = join(await harness.tempDir(), 'workspace');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'quire.json'), JSON.stringify({ gate: { deny: [{ tool: 'blok' }] } }));
    const manifest = { id: 'broken', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
    await writeUserPlugin(workspace, 'broken', { manifest, code: 'export default { activate() { throw new Error("boom"); } };' });
    const started = await startServe(['--workspace', workspace], true);
    children.push(started.child);
    expect(started.stderr()).toMatch(/plugin 'broken' refused: PLUGIN_ACTIVATION_FAILED/);
    expect(started.stderr()).toMatch(/quire\.json#\/gate\/deny\/0\/tool: CONFIG_UNKNOWN_TOOL .*'block'/);
    const token = /\n {2}(qk_\S+)\n/.exec(started.stdout())?.[1] ?? '';
    const response = await fetch(`${started.url}/api/plugins`, { headers: { authorization: `Bearer ${token}` } });
    const { plugins } = await response.json() as { plugins: { id: string; state: string; problems?: { code: string }[] }[] };
    expect(plugins.find((plugin) => plugin.id === 'broken')).toMatchObject({ state: 'refused', problems: [{ code: 'PLUGIN_ACTIVATION_FAILED' }] });
    expect(plugins.find((plugin) => plugin.id === 'blocks')?.state).toBe('active');
    expect(await stop(started.child)).toBe(0);
  });
});
