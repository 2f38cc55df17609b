import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../core/log.js';
import { SqlRunner, type QueryRequest } from '../../../plugins/sql/sql-runner.js';
import { REPO_ROOT, caught, useHarness } from '../../helpers/harness.js';
import { processesRunning } from '../../helpers/processes.js';

const { tempDir } = useHarness();
const RUNAWAY = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n';
const request = (sql: string, timeoutMs = 2_000): QueryRequest => ({ sql, maxRows: 100, maxCellBytes: 2_000, maxResultBytes: 256_000, timeoutMs });

/** Processes running the SQL child script on this database file. */
const sqlChildren = (dbFile: string): Promise<number[]> => processesRunning('sql-child.cjs', dbFile);

/** CPU time of process `pid` so far, in clock ticks (user and system; /proc/<pid>/stat). */
async function cpuTicks(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).replace(/^.*\) /s, '').split(' ');
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}

/** A database of its own, so that only the runner under test has children on it. */
function databaseIn(folder: string): string {
  const file = join(folder, 'runner.db');
  const db = new Database(file);
  db.exec('CREATE TABLE blocks (id TEXT PRIMARY KEY)');
  db.close();
  return file;
}

async function waitUntil(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the SQL child process', () => {
  const runners: SqlRunner[] = [];
  afterEach(async () => { for (const runner of runners.splice(0)) await runner.close(); });

  async function runner(): Promise<{ sql: SqlRunner; file: string }> {
    const file = databaseIn(await tempDir());
    const created = new SqlRunner(file, silentLogger);
    runners.push(created);
    return { sql: created, file };
  }

  it('replaces a child that died while idle, and the next statement runs', async () => {
    const { sql, file } = await runner();
    await sql.warm();
    const [pid] = await sqlChildren(file);
    process.kill(pid!, 'SIGKILL');
    await waitUntil(async () => !(await sqlChildren(file)).includes(pid!), 'the child to die');
    expect(await sql.run(request('SELECT 7'))).toMatchObject({ ok: true, rows: [[7]] });
  });

  it('runs a statement once more in a new process when its process is killed under it, saying so in the log, and only once', async () => {
    const file = databaseIn(await tempDir());
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => { warnings.push(message); } };
    const sql = new SqlRunner(file, logger);
    runners.push(sql);
    await sql.warm();
    // About 1 s here: still running when its process is killed, which waits for it to be busy.
    const counted = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000000) SELECT count(*) FROM n';
    const [first] = await sqlChildren(file);
    const idle = await cpuTicks(first!);
    const answer = sql.run(request(counted, 20_000));
    // 100 ms of CPU into the statement (it takes about ten times that).
    await waitUntil(async () => (await cpuTicks(first!)) - idle >= 10, 'the statement to run');
    // Killed from outside while the statement runs: a death the statement did not cause.
    process.kill(first!, 'SIGKILL');
    expect(await answer).toMatchObject({ ok: true, rows: [[5000000]] });
    await waitUntil(async () => warnings.length > 0, 'the death to be logged');
    expect(warnings[0]).toMatch(/ended during a statement; the statement runs once more/);
    // Killed again in its second process: answered as the statement's doing, not run a third time (a
    // statement that never ends, so that both kills come while it runs).
    const twice = sql.run(request(RUNAWAY, 20_000));
    const killed = new Set([first!]);
    for (let round = 0; killed.size < 3 && round < 300; round++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const [pid] = await sqlChildren(file);
      // Past its start (about 0.2 s of CPU), so running the statement: a process killed while it starts is a failure to start.
      if (pid !== undefined && !killed.has(pid) && await cpuTicks(pid) >= 60) {
        killed.add(pid);
        process.kill(pid, 'SIGKILL');
      }
    }
    const error = await caught(twice);
    expect(error.details, `${error.code}: ${error.message}`).toMatchObject({ reason: 'process_died', exit: { signal: 'SIGKILL' } });
  });

  it('never starts a statement cancelled while it waited, and refuses statements after close', async () => {
    const { sql, file } = await runner();
    const first = sql.run(request(RUNAWAY, 400));
    const controller = new AbortController();
    // Answered at once when cancelled (caught before the wait for the first, or it goes unhandled).
    const second = caught(sql.run(request('SELECT 1'), controller.signal));
    controller.abort();
    expect((await caught(first)).code).toBe('ACTION_TIMEOUT');
    expect((await second).code).toBe('ACTION_CANCELLED');
    const during = sql.run(request(RUNAWAY, 5_000));
    const queued = sql.run(request('SELECT 1'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sql.close();
    expect(await caught(during)).toMatchObject({ code: 'PLUGIN_ERROR', details: { reason: 'closing' } });
    expect((await caught(queued)).code).toBe('PLUGIN_ERROR');
    expect((await caught(sql.run(request('SELECT 1')))).code).toBe('PLUGIN_ERROR');
    await waitUntil(async () => (await sqlChildren(file)).length === 0, 'no SQL child left');
  });

  it('answers a cancel of a statement waiting its turn at once, not when the one ahead ends', async () => {
    const { sql } = await runner();
    const ahead = sql.run(request(RUNAWAY, 3_000));
    const controller = new AbortController();
    const waiting = sql.run(request('SELECT 1'), controller.signal);
    let answered = false;
    waiting.catch(() => undefined).finally(() => { answered = true; });
    controller.abort();
    await new Promise((resolve) => setImmediate(resolve));
    // Answered before the statement ahead has ended (ordered by events, not timed).
    let aheadEnded = false;
    void ahead.catch(() => undefined).finally(() => { aheadEnded = true; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([answered, aheadEnded]).toEqual([true, false]);
    expect((await caught(waiting)).code).toBe('ACTION_CANCELLED');
    expect((await caught(ahead)).code).toBe('ACTION_TIMEOUT');
    expect(await sql.run(request('SELECT 1'))).toMatchObject({ rows: [expect.anything()] });
  });

  it('closes at once while its process is still starting, ending it; a warm-up cut short is no failure', async () => {
    const { sql, file } = await runner();
    let warmed = false;
    const warming = sql.warm().finally(() => { warmed = true; });
    let pids: number[] = [];
    await waitUntil(async () => (pids = await sqlChildren(file)).length === 1, 'the SQL child to be started');
    // Stopped, it never says it is ready: a close that waited for that would never return.
    process.kill(pids[0]!, 'SIGSTOP');
    // A statement waiting for that process when the close comes.
    const waiting = sql.run(request('SELECT 1'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(warmed).toBe(false);
    await sql.close();
    expect(await sqlChildren(file)).toEqual([]);
    await expect(warming).resolves.toBeUndefined();
    expect(await caught(waiting)).toMatchObject({ code: 'PLUGIN_ERROR', details: { reason: 'closing' } });
  });

  it('waits at close for a process it has just killed, and says nothing of the replacement it ends', async () => {
    const warnings: string[] = [];
    const file = databaseIn(await tempDir());
    const sql = new SqlRunner(file, { ...silentLogger, warn: (message: string) => void warnings.push(message) });
    runners.push(sql);
    // Cancelled while it runs: its process is killed and a replacement started, which the close then ends.
    const controller = new AbortController();
    const running = sql.run(request(RUNAWAY, 5_000), controller.signal);
    // Half a second of CPU: more than a process takes to start, so the endless statement is running.
    await waitUntil(async () => {
      const [pid] = await sqlChildren(file);
      return pid !== undefined && await cpuTicks(pid) > 50;
    }, 'the SQL child to run the statement');
    controller.abort();
    expect((await caught(running)).code).toBe('ACTION_CANCELLED');
    await sql.close();
    expect(await sqlChildren(file)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('ends a statement that needs more memory than its limit, and answers the next one', async () => {
    const { sql } = await runner();
    const hog = "SELECT length(group_concat(printf('%.1000000c', 'x'))) FROM (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 4000) SELECT x FROM n)";
    const outcome = await sql.run(request(hog, 8_000)).catch((error: { code: string }) => ({ ok: false, reason: error.code }));
    expect(outcome.ok).toBe(false);
    expect(await sql.run(request('SELECT 1'))).toMatchObject({ ok: true });
  });

  it('does not outlive a kernel process that dies in the middle of a runaway statement', async () => {
    const file = databaseIn(await tempDir());
    const script = `
      const { SqlRunner } = await import(${JSON.stringify(join(REPO_ROOT, 'dist', 'plugins', 'sql', 'sql-runner.js'))});
      const runner = new SqlRunner(${JSON.stringify(file)}, { warn() {}, info() {}, debug() {}, error() {}, child() { return this; } });
      await runner.warm();
      runner.run({ sql: ${JSON.stringify(RUNAWAY)}, maxRows: 1, maxCellBytes: 100, maxResultBytes: 1000, timeoutMs: 60000 }).catch(() => {});
      setTimeout(() => process.stdout.write('running\\n'), 300);
    `;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => parent.stdout.on('data', () => resolve()));
    const [child] = await sqlChildren(file);
    expect(child).toBeDefined();
    parent.kill('SIGKILL');
    await waitUntil(async () => !existsSync(`/proc/${child}`), 'the orphaned child to end');
  });
});

