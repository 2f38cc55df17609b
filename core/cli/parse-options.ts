import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliIO } from './cli-io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export type Parsed = { values: Record<string, string | boolean | undefined>; positionals: string[] };

/** parseArgs in strict mode; an unknown or malformed option is reported (not thrown) so the caller can exit 2. */
export function parseOptions(args: string[], options: Options, io: CliIO, command: string): Parsed | undefined {
  try {
    const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
  } catch (error) {
    io.err(`quire ${command}: ${(error as Error).message}`);
    io.err(`Run 'quire ${command} --help' for usage.`);
    return undefined;
  }
}
