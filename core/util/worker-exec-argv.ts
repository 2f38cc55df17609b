/**
 * The process's flags the worker keeps (memory limits...). Not --input-type (node -e: a worker refuses
 * it), nor those that preload code (a test runner's --require/--import hooks): the worker runs only
 * compiled code of its own, and the egress guard refuses a worker that preloads anything.
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
