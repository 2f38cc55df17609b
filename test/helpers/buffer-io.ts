import type { CliIO } from '../../core/cli/cli-io.js';

/** A CliIO that keeps what a command printed. */
export function bufferIO(): CliIO & { outText(): string; errText(): string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    outText: () => out.join('\n'),
    errText: () => err.join('\n'),
  };
}
