import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { KernelError, type Logger } from '../../core/index.js';

export interface QueryRequest {
  sql: string;
  maxRows: number;
  maxCellBytes: number;
  maxResultBytes: number;
  timeoutMs: number;
}

export type QueryResponse =
  | { ok: true; columns: string[]; rows: unknown[][]; truncated: boolean; cellsTruncated: boolean; existing: string[] }
  | { ok: false; reason: string; message: string };

type ChildMessage = ({ id: number } & QueryResponse) | { ready: true };

/** The child's script is plain JavaScript beside this module in the sources; the build runs it from there too. */
function childScript(): string {
  for (const candidate of ['./sql-child.cjs', '../../../plugins/sql/sql-child.cjs']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('sql-child.cjs is missing from plugins/sql');
}

/** Memory a statement may use, JavaScript and SQLite together (the child's address space). */
const ADDRESS_SPACE_BYTES = 2 * 1024 ** 3;
const PRLIMIT = '/usr/bin/prlimit';

/**
 * Starts the child under an address-space limit when `prlimit` is at hand, so that a statement which
 * sorts or builds huge values ends the child (SQLite reports "out of memory"), not the machine's
 * memory. V8's heap is bounded separately. Without prlimit, only the time limit bounds a statement.
 */
function spawnChild(script: string, args: string[]): ChildProcess {
  const node = [process.execPath, '--max-old-space-size=256', script, ...args];
  const options = { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] as ('ignore' | 'pipe' | 'ipc')[] };
  if (existsSync(PRLIMIT)) return spawn(PRLIMIT, [`--as=${ADDRESS_SPACE_BYTES}`, '--', ...node], options);
  return spawn(node[0]!, node.slice(1), options);
}

/** Least time left for a second run of a statement to be worth starting. */
const RETRY_MIN_MS = 200;

/**
 * A process killed by a signal from outside, not one that gave up on its own: V8 and SQLite running out
 * of memory abort (SIGABRT) or say so on stderr, and a statement that did that would only do it again.
 */
function endedFromOutside(signal: NodeJS.Signals | null, stderr: string | undefined): boolean {
  return (signal === 'SIGKILL' || signal === 'SIGTERM') && !/out of memory|heap limit|allocation failed/i.test(stderr ?? '');
}

const cancelled = (): KernelError => new KernelError('ACTION_CANCELLED', 'The query was cancelled');

const timedOut = (timeoutMs: number): KernelError =>
  new KernelError('ACTION_TIMEOUT', `The query ran longer than ${timeoutMs} ms and was stopped; add a LIMIT or narrow it`, { details: { timeoutMs } });

const closing = (): KernelError => new KernelError('PLUGIN_ERROR', 'The SQL tool is closing', { details: { reason: 'closing' } });

const processDied = (code: number | null, signal: NodeJS.Signals | null): KernelError =>
  new KernelError('INVALID_INPUT', 'The query stopped the SQL process (it may have used too much memory); narrow it or add a LIMIT', { details: { reason: 'process_died', exit: { code, signal } } });

/**
 * Runs statements in a warm child process, one at a time. A statement past its time limit is stopped by
 * killing the child with SIGKILL (nothing else stops SQLite mid-statement), and a new child is started
 * at once so the next statement does not wait for a fork.
 */
export class SqlRunner {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  /** Every child started and not yet gone, each with its end: close() ends them all and waits for each. */
  private readonly alive = new Map<ChildProcess, Promise<void>>();
  private tail: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  private closed = false;
  private readonly script = childScript();
  private readonly driver = createRequire(import.meta.url).resolve('better-sqlite3');
  /** The last 2,000 characters each child wrote to stderr. */
  private readonly stderr = new WeakMap<ChildProcess, string>();

  constructor(private readonly dbFile: string, private readonly log: Logger) {}

  /** Starts the child ahead of the first statement; one killed by close() meanwhile is no failure. */
  warm(): Promise<void> {
    return this.start().then(() => undefined, (error: unknown) => {
      if (!this.closed) throw error;
    });
  }

  run(request: QueryRequest, signal?: AbortSignal): Promise<QueryResponse> {
    const result = this.tail.then(() => {
      if (this.closed) throw closing();
      return this.runNow(request, signal);
    });
    this.tail = result.catch(() => undefined);
    // A cancel while it waits its turn (behind another session's long statement) is answered at once; the
    // statement is then refused when its turn comes (runNow checks the signal first).
    if (!signal) return result;
    return new Promise<QueryResponse>((resolve, reject) => {
      const onAbort = (): void => reject(cancelled());
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * Kills every child, and waits until each is gone; statements still queued are refused. A child still
   * starting is killed as it is: waiting until it was ready (a fork and the driver's load, about 200 ms)
   * made every stop soon after a start that much slower, every one-shot CLI command among them.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.child = undefined;
    for (const child of this.alive.keys()) child.kill('SIGKILL');
    await Promise.all(this.alive.values());
  }

  /**
   * `retry`: this is the statement's second run, after its first process ended under it, within the
   * first run's deadline. Statements are read-only, so running one again changes nothing; a process can
   * be ended from outside (one already ending when the statement was sent, the machine's OOM killer),
   * and a statement that ends every process it runs in ends two and is answered so.
   */
  private async runNow(request: QueryRequest, signal?: AbortSignal, retry?: { deadline: number }): Promise<QueryResponse> {
    // A call cancelled while it waited its turn never starts; neither does one after close().
    if (signal?.aborted) throw cancelled();
    const deadline = retry?.deadline ?? performance.now() + request.timeoutMs;
    const child = await this.liveChild();
    // Cancelled, or out of time, while a process started (a second run's fork can take hundreds of ms).
    if (signal?.aborted) throw cancelled();
    const left = Math.ceil(deadline - performance.now());
    if (left <= 0) throw timedOut(request.timeoutMs);
    const id = this.nextId++;
    return new Promise<QueryResponse>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const stop = (error: KernelError): void => {
        finish();
        this.kill(child);
        reject(error);
      };
      const onMessage = (message: ChildMessage): void => {
        if (!('id' in message) || message.id !== id) return;
        finish();
        const { id: _id, ...response } = message;
        resolve(response as QueryResponse);
      };
      const onExit = (code: number | null, exitSignal: NodeJS.Signals | null): void => {
        // Ended by close() (the kernel stopping): no fault of the statement's, and nothing to log.
        if (this.closed) return stop(new KernelError('PLUGIN_ERROR', 'The SQL tool closed while the statement ran', { details: { reason: 'closing' } }));
        const again = retry === undefined && endedFromOutside(exitSignal, this.stderr.get(child)) && deadline - performance.now() >= RETRY_MIN_MS;
        // Said in the log with what the process wrote last, once its stderr is read to the end ('close' follows 'exit').
        child.once('close', () => this.log.warn(`the SQL process ended during a statement${again ? '; the statement runs once more in a new one' : ''}`, { code, signal: exitSignal, stderr: this.stderr.get(child) ?? '' }));
        if (!again) return stop(processDied(code, exitSignal));
        finish();
        if (this.child === child) this.child = undefined;
        resolve(this.runNow(request, signal, { deadline }));
      };
      const onAbort = (): void => stop(cancelled());
      const timer = setTimeout(() => stop(timedOut(request.timeoutMs)), left);
      child.on('message', onMessage);
      child.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      child.send({ id, sql: request.sql, maxRows: request.maxRows, maxCellBytes: request.maxCellBytes, maxResultBytes: request.maxResultBytes, timeoutMs: left });
    });
  }

  /** A warm process; one that died while idle is replaced, rather than its death blamed on the next statement. */
  private async liveChild(): Promise<ChildProcess> {
    const child = await this.start();
    if (child.exitCode === null && child.signalCode === null && child.connected) return child;
    if (this.child === child) this.child = undefined;
    return this.start();
  }

  private kill(child: ChildProcess): void {
    child.kill('SIGKILL');
    if (this.child === child) this.child = undefined;
    // The next statement should find a warm process, not pay for a fork.
    this.start().catch((error: unknown) => {
      if (!this.closed) this.log.warn('could not restart the SQL process', { error: String(error) });
    });
  }

  private start(): Promise<ChildProcess> {
    if (this.closed) return Promise.reject(closing());
    if (this.child) return Promise.resolve(this.child);
    this.starting ??= new Promise<ChildProcess>((resolve, reject) => {
      const child = spawnChild(this.script, [this.dbFile, this.driver]);
      this.alive.set(child, new Promise<void>((gone) => {
        child.once('exit', () => gone());
        // A process that could not be started at all ends with 'error' and no 'exit'.
        child.on('error', (error) => {
          if (child.pid !== undefined) return;
          gone();
          reject(new KernelError('PLUGIN_ERROR', `The SQL process could not be started: ${error.message}`));
        });
      }).finally(() => this.alive.delete(child)));
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-2000); this.stderr.set(child, stderr); });
      const onReady = (message: ChildMessage): void => {
        if (!('ready' in message)) return;
        child.off('message', onReady);
        this.child = child;
        resolve(child);
      };
      child.on('message', onReady);
      child.once('exit', (code) => {
        if (this.child === child) this.child = undefined;
        reject(this.closed ? closing() : new KernelError('PLUGIN_ERROR', `The SQL process exited (${String(code)}): ${stderr.trim()}`));
      });
    }).finally(() => { this.starting = undefined; });
    return this.starting;
  }
}
