import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, caught, useHarness } from '../../helpers/harness.js';

const CLI = join(REPO_ROOT, 'dist', 'core', 'cli', 'main.js');
const run = promisify(execFile);

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

describe('the workspace lock', () => {
  const { boot, tempDir } = useHarness();

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

  it('treats a lock from another host as held', async () => {
    const workspace = join(await tempDir(), 'ws');
    await mkdir(join(workspace, '.quire'), { recursive: true });
    await writeFile(join(workspace, '.quire', 'kernel.lock'), JSON.stringify({ pid: 1, host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z' }));
    expect((await caught(boot({ workspace }))).code).toBe('WORKSPACE_LOCKED');
  });
});
