import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The process's flags a worker of the kernel keeps: not --input-type (node -e: a worker refuses it), nor
 * those that preload code (a test runner's --require/--import hooks), since the worker runs only
 * compiled code of its own and the egress guard refuses a worker that preloads anything.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (arg.startsWith('--input-type')) continue;
    const loader = /^(-r|--require|--import|--loader|--experimental-loader)(=|$)/.exec(arg);
    if (loader) {
      if (loader[2] === '') i++; // its value is the next argument
      continue;
    }
    kept.push(arg);
  }
  return kept;
}

/**
 * A worker of the kernel with the flags of workerExecArgv. A worker refuses V8 flags and flags of the
 * whole process (`node --max-old-space-size=… quire serve`, `--title`): then it starts without any,
 * as V8's flags are the process's and hold in every thread anyway.
 */
export function startWorker(script: URL, options: Omit<WorkerOptions, 'execArgv'> = {}, execArgv: readonly string[] = process.execArgv): Worker {
  try {
    return new Worker(script, { ...options, execArgv: workerExecArgv(execArgv) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return new Worker(script, { ...options, execArgv: [] });
  }
}

/**
 * A worker's compiled script: `name` beside the module at `base` (running from dist/), else the same
 * file under dist/ (`fromSources`, relative to `base`: the TypeScript sources under a test runner).
 */
export function compiledScript(base: string, name: string, fromSources: string): URL | undefined {
  for (const candidate of [`./${name}`, fromSources]) {
    const url = new URL(candidate, base);
    if (existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}
