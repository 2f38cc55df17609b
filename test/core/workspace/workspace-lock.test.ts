import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { mkdir, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Kernel } from '../../../core/kernel.js';
import { REPO_ROOT, caught, useHarness } from '../../helpers/harness.js';

const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');
const run = promisify(execFile);

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every file below a folder with its bytes (hex) and time of change. */
async function filesOf(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path] = `${(await stat(path)).mtimeMs} ${(await readFile(path)).toString('hex')}`;
  }
  return out;
}

describe('the workspace lock', () => {
  const { boot, tempDir, kernelOptions } = useHarness();

  it('stops a second kernel from opening the same workspace and names the holder', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const error = await caught(boot({ workspace }));
    expect(error.code).toBe('WORKSPACE_LOCKED');
    expect(error.details).toMatchObject({ pid: process.pid });
    expect(error.message).toContain(`pid ${process.pid}`);
    await first.close();
    const again = await boot({ workspace });
    expect(again.workspace.root).toBe(first.workspace.root);
  });

  it('stops another process (the CLI) while a kernel holds the workspace', async () => {
    const workspace = join(await tempDir(), 'ws');
    await boot({ workspace });
    const result = await run(process.execPath, [CLI, 'index', 'rebuild', '--workspace', workspace]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('WORKSPACE_LOCKED');
    expect(result.stderr).toContain(`pid ${process.pid}`);
  });

  it('takes over a lock whose holder is dead', async () => {
    const workspace = join(await tempDir(), 'ws');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    await mkdir(join(workspace, '.quire'), { recursive: true });
    const lockFile = join(workspace, '.quire', 'kernel.lock');
    await writeFile(lockFile, JSON.stringify({ pid: dead, host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
    const kernel = await boot({ workspace });
    expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    await kernel.close();
    await expect(readFile(lockFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes over a lock whose pid now belongs to another, live process (the pid was reused)', async () => {
    const workspace = join(await tempDir(), 'ws');
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await mkdir(join(workspace, '.quire'), { recursive: true });
      const lockFile = join(workspace, '.quire', 'kernel.lock');
      // A kernel that ran as this pid once, started at another time than the sleep that has the pid now.
      const started = startTimeOf(sleeper.pid!);
      await writeFile(lockFile, JSON.stringify({ pid: sleeper.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', start: String(Number(started) - 1000) }));
      const kernel = await boot({ workspace });
      expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, start: startTimeOf(process.pid) });
      await kernel.close();
    } finally {
      sleeper.kill();
    }
  });

  it('still treats a live holder as held when its start time matches the lock', async () => {
    const workspace = join(await tempDir(), 'ws');
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await mkdir(join(workspace, '.quire'), { recursive: true });
      await writeFile(join(workspace, '.quire', 'kernel.lock'), JSON.stringify({ pid: sleeper.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', start: startTimeOf(sleeper.pid!) }));
      const error = await caught(boot({ workspace }));
      expect(error.code).toBe('WORKSPACE_LOCKED');
      expect(error.details).toMatchObject({ pid: sleeper.pid });
    } finally {
      sleeper.kill();
    }
  });

  it('treats a lock from another host without a heartbeat as held, and says which file to remove if it no longer runs', async () => {
    const workspace = join(await tempDir(), 'ws');
    await mkdir(join(workspace, '.quire'), { recursive: true });
    const lockFile = join(workspace, '.quire', 'kernel.lock');
    await writeFile(lockFile, JSON.stringify({ pid: 1, host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z' }));
    await utimes(lockFile, new Date(Date.now() - 86_400_000), new Date(Date.now() - 86_400_000));
    const error = await caught(boot({ workspace }));
    expect(error.code).toBe('WORKSPACE_LOCKED');
    expect(error.message).toContain(lockFile);
    expect(error.message).toContain('remove that file by hand');
  });

  it('holds a lock from another host while its heartbeat goes on, and takes it over once the heartbeat has stopped for ten minutes', async () => {
    const workspace = join(await tempDir(), 'ws');
    await mkdir(join(workspace, '.quire'), { recursive: true });
    const lockFile = join(workspace, '.quire', 'kernel.lock');
    // A container started again under a new hostname finds its old self's lock.
    // Its heartbeat every 40 ms: a lock that looks stale is watched for a few of them before it is taken.
    await writeFile(lockFile, JSON.stringify({ pid: 7, host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z', beat: 40 }));
    await utimes(lockFile, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const error = await caught(boot({ workspace }));
    expect(error.code).toBe('WORKSPACE_LOCKED');
    expect(error.message).toContain('taken over once it has not been touched for 10 minutes');
    await utimes(lockFile, new Date(Date.now() - 11 * 60_000), new Date(Date.now() - 11 * 60_000));
    const kernel = await Kernel.boot({ ...(await kernelOptions({ workspace })), lockHeartbeatMs: 40 });
    try {
      expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), beat: 40 });
      // Its own heartbeat moves the lock's time of change.
      await utimes(lockFile, new Date(Date.now() - 11 * 60_000), new Date(Date.now() - 11 * 60_000));
      await waitFor(async () => Date.now() - (await stat(lockFile)).mtimeMs < 60_000);
    } finally {
      await kernel.close();
    }
  });

  it('holds a lock of another host that looks stale by this host\'s clock (running ahead) while its holder still touches it', async () => {
    const workspace = join(await tempDir(), 'ws');
    await mkdir(join(workspace, '.quire'), { recursive: true });
    const lockFile = join(workspace, '.quire', 'kernel.lock');
    // A beat of 400 ms: watched for 1 s (at 40 ms, for 100 ms, a loaded thread pool could finish no touch in time).
    await writeFile(lockFile, JSON.stringify({ pid: 7, host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z', beat: 400 }));
    // The holder's clock is eleven minutes behind this host's: every touch it makes looks old here.
    const behind = () => new Date(Date.now() - 11 * 60_000);
    await utimes(lockFile, behind(), behind());
    const holder = setInterval(() => { void utimes(lockFile, behind(), new Date(Date.now() - 11 * 60_000 + Math.random() * 1000)); }, 20);
    try {
      expect((await caught(boot({ workspace }))).code).toBe('WORKSPACE_LOCKED');
    } finally {
      clearInterval(holder);
    }
  });

  it('fences a kernel whose lock another kernel took over: every call refused, and its close writes nothing, leaving that kernel\'s lock', async () => {
    const workspace = join(await tempDir(), 'ws');
    const kernel = await Kernel.boot({ ...(await kernelOptions({ workspace })), lockHeartbeatMs: 40 });
    const person = { kind: 'person' as const, name: 'alice', role: 'admin' as const };
    try {
      // This kernel has no plugins: a call is refused as unknown before, and for the lock after.
      expect((await caught(kernel.pipeline.call({ target: 'notebook_list', input: {}, principal: person }))).code).not.toBe('WORKSPACE_LOCKED');
      const lockFile = join(workspace, '.quire', 'kernel.lock');
      const theirs = JSON.stringify({ pid: 4242, host: 'elsewhere.example', since: '2026-12-03T00:00:00.000Z', beat: 30_000 });
      await writeFile(lockFile, theirs);
      expect(await kernel.lockLost).toBe('pid 4242 on elsewhere.example, since 2026-12-03T00:00:00.000Z');
      const refused = await caught(kernel.pipeline.call({ target: 'notebook_list', input: {}, principal: person }));
      expect(refused.code).toBe('WORKSPACE_LOCKED');
      // An agent turn's calls (prepared, then executed) are refused the same way.
      expect((await caught(() => kernel.pipeline.prepare({ target: 'notebook_list', input: {}, principal: person }))).code).toBe('WORKSPACE_LOCKED');
      const before = await filesOf(workspace);
      await kernel.close();
      // Nothing flushed into the workspace (no session, audit head or ledger written), the other kernel's lock in place.
      expect(await filesOf(workspace)).toEqual(before);
      expect(await readFile(lockFile, 'utf8')).toBe(theirs);
    } finally {
      await kernel.close();
    }
  });
});
