import { createInterface, type Interface } from 'node:readline';

/** Where a command writes (and, for interactive commands, reads); the real process streams, tests script it. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** Text without a line end (a model's answer as it streams); commands fall back to `out`. */
  write?(text: string): void;
  /**
   * The next line typed, after showing `prompt`; undefined once the input has ended, or when `signal`
   * aborts the wait (Ctrl-C at a prompt): the line typed after that goes to the next prompt.
   * `fresh`: at a terminal, lines typed before the prompt was shown are set aside, not taken as its answer.
   */
  readLine?(prompt: string, signal?: AbortSignal, options?: { fresh?: boolean }): Promise<string | undefined>;
  /** Calls `handler` on Ctrl-C instead of ending the process; returns the undo. */
  onInterrupt?(handler: () => void): () => void;
}

let stdinLines: { reader: Interface; queue: string[]; waiting: ((line: string | undefined) => void)[]; ended: boolean } | undefined;

/** Lines of standard input, read on demand, so that piped input works as well as a terminal. */
function readStdinLine(prompt: string, signal?: AbortSignal, options?: { fresh?: boolean }): Promise<string | undefined> {
  if (!stdinLines) {
    const state = { reader: createInterface({ input: process.stdin, terminal: false }), queue: [] as string[], waiting: [] as ((line: string | undefined) => void)[], ended: false };
    state.reader.on('line', (line) => { const next = state.waiting.shift(); if (next) next(line); else state.queue.push(line); });
    state.reader.on('close', () => { state.ended = true; for (const next of state.waiting.splice(0)) next(undefined); });
    stdinLines = state;
  }
  const state = stdinLines;
  // A `y` typed while the agent worked approved a write the person was never shown. Piped input (a
  // script answering in advance) keeps its lines.
  if (options?.fresh && process.stdin.isTTY && state.queue.length > 0) {
    toStdout(`(${state.queue.length === 1 ? 'a line' : `${state.queue.length} lines`} typed before this question set aside)\n`);
    state.queue.length = 0;
  }
  toStdout(prompt);
  if (state.queue.length > 0) return Promise.resolve(state.queue.shift());
  if (state.ended || signal?.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      // Out of the queue, so that the next line is not swallowed by a prompt nobody waits on.
      const index = state.waiting.indexOf(waiter);
      if (index >= 0) state.waiting.splice(index, 1);
      resolve(undefined);
    };
    const waiter = (line: string | undefined): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve(line);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    state.waiting.push(waiter);
  });
}

/** Lets the process end once a command is done with standard input. */
export function endInput(): void {
  stdinLines?.reader.close();
  stdinLines = undefined;
}

/**
 * The streams whose reader went away (`quire search | head`): what is left to print goes nowhere and
 * the command ends as it would (its kernel closed); the write's EPIPE crashed the process.
 */
const gone = new WeakSet<NodeJS.WriteStream>();
const watched = new WeakSet<NodeJS.WriteStream>();
/** Writes to standard output or error; once its reader has gone (EPIPE), what follows goes nowhere. */
function toStream(stream: NodeJS.WriteStream, text: string): void {
  if (!watched.has(stream)) {
    watched.add(stream);
    // Progress goes to standard error: `quire import … 2>&1 | head` crashed mid-import, and the next
    // start undid the import as one a crash had cut short.
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      gone.add(stream);
    });
  }
  if (!gone.has(stream)) stream.write(text);
}
const toStdout = (text: string): void => toStream(process.stdout, text);

export const processIO: CliIO = {
  out: (line) => toStdout(`${line}\n`),
  err: (line) => toStream(process.stderr, `${line}\n`),
  write: (text) => toStdout(text),
  readLine: readStdinLine,
  onInterrupt: (handler) => {
    process.on('SIGINT', handler);
    return () => process.off('SIGINT', handler);
  },
};

/** 0 done, 1 the command ran and found problems (or failed), 2 the command line itself was wrong. */
export const EXIT_OK = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_USAGE = 2;

export interface Command {
  name: string;
  summary: string;
  help: string;
  run(args: string[], io: CliIO): Promise<number>;
}

/**
 * The workspace lock was taken from this kernel (it was suspended past the heartbeat's limit): the
 * process ends at once, as a crash would, flushing nothing into a workspace another kernel now writes;
 * every write it acknowledged is durable already.
 */
export function exitOnLostLock(say: (line: string) => void, command: string, holder: string): never {
  say(`quire ${command}: the workspace lock was taken from this kernel (now held by ${holder}); it exits at once, writing nothing more`);
  process.exit(EXIT_PROBLEMS);
}
