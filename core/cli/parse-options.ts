import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliIO } from './cli-io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export type Parsed = { values: Record<string, string | boolean | undefined>; positionals: string[] };

/** How many words besides options a command takes, and what to say when it is given more. */
export interface Positionals {
  max: number;
  /** Said after the refusal, e.g. how to give many files at once. */
  hint?: string;
}

/**
 * parseArgs in strict mode; an unknown or malformed option, or more words than the command takes, is
 * reported (not thrown) so the caller can exit 2. Extra words were dropped silently: `quire import
 * notes/*.md` imported the first file the shell gave and said it was done.
 */
export function parseOptions(args: string[], options: Options, io: CliIO, command: string, positionals?: Positionals): Parsed | undefined {
  try {
    const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    if (positionals !== undefined && parsed.positionals.length > positionals.max && !parsed.values.help) {
      const extra = parsed.positionals.slice(positionals.max);
      const shown = extra.slice(0, 3).map((word) => `'${word.slice(0, 80)}'`).join(', ') + (extra.length > 3 ? `, … (${extra.length} in all)` : '');
      const takes = positionals.max === 0 ? 'takes no arguments besides options' : `takes ${positionals.max === 1 ? 'one argument' : `${positionals.max} arguments`} besides options`;
      io.err(`quire ${command}: unexpected ${extra.length === 1 ? 'argument' : 'arguments'} ${shown}: it ${takes}${positionals.hint ? `; ${positionals.hint}` : ''}`);
      io.err(`Run 'quire ${command} --help' for usage.`);
      return undefined;
    }
    return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
  } catch (error) {
    io.err(`quire ${command}: ${(error as Error).message}`);
    io.err(`Run 'quire ${command} --help' for usage.`);
    return undefined;
  }
}
