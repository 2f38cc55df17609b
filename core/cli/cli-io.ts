/** Where a command writes; the real process streams, or buffers in tests. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
}

export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
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
