import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
}

/** Runs the built CLI with plain node, as the README does, and waits for it to listen. */
function startServe(workspace: string, expectToken: boolean): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'serve', '--workspace', workspace, '--port', '0'], { cwd: REPO_ROOT });
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
        resolve({ child, url: match[1], stdout: () => out });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${String(code)}: ${err}`)));
  });
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
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  it('creates the workspace, binds to 127.0.0.1, prints the admin token once and stores it with mode 0600', async () => {
    expect(existsSync(CLI), 'run `npm run build` first (npm test does)').toBe(true);
    const workspace = join(await harness.tempDir(), 'workspace');
    const first = await startServe(workspace, true);
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

    const second = await startServe(workspace, false);
    children.push(second.child);
    expect(second.stdout()).not.toContain('Admin token');
    const again = await fetch(`${second.url}/api/actions/system/system/info`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(200);
    expect(await stop(second.child)).toBe(0);
  });
});
