import { KERNEL_VERSION } from '../paths.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from './cli-io.js';
import { COMMANDS, type CommandEntry } from './command-list.js';
import { isKernelError } from '../errors.js';

function listed(commands: readonly CommandEntry[]): string[] {
  const width = Math.max(...commands.map((command) => command.name.length));
  return commands.map((command) => `  ${command.name.padEnd(width)}   ${command.summary}`);
}

function usage(commands: readonly CommandEntry[]): string {
  return [
    `Quire ${KERNEL_VERSION}: a local-first block notebook kernel with an agent inside.`,
    '',
    'Usage: quire <command> [options]',
    '',
    'Commands:',
    ...listed(commands),
    '',
    "Run 'quire <command> --help' for a command's options.",
  ].join('\n');
}

/** `quire snapshot` and its kin: the group's commands, as `quire --help` lists them. */
function groupUsage(name: string, group: readonly CommandEntry[]): string {
  return [`Usage: quire ${name} <command> [options]`, '', 'Commands:', ...listed(group), '', `Run 'quire ${name} <command> --help' for a command's options.`].join('\n');
}

const asksForHelp = (word: string | undefined): boolean => word === '--help' || word === '-h' || word === 'help';

/** Finds the command named by the first one or two words and runs it; returns the exit code. */
export async function runCli(argv: string[], io: CliIO, commands: readonly CommandEntry[] = COMMANDS): Promise<number> {
  if (argv.length === 0 || asksForHelp(argv[0])) {
    io.out(usage(commands));
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  if (argv[0] === '--version') return io.out(KERNEL_VERSION), EXIT_OK;
  const byName = new Map(commands.map((command) => [command.name, command]));
  const command = byName.get(`${argv[0]} ${argv[1] ?? ''}`) ?? byName.get(argv[0] ?? '');
  if (!command) {
    const group = commands.filter((candidate) => candidate.name.startsWith(`${argv[0]} `));
    // `quire snapshot --help` was refused (exit 2) as an unknown subcommand; asked for, the group's list is help.
    if (group.length > 0 && asksForHelp(argv[1])) return io.out(groupUsage(argv[0] ?? '', group)), EXIT_OK;
    io.err(group.length > 0
      ? argv.length === 1
        ? groupUsage(argv[0] ?? '', group)
        : `quire ${argv[0]}: unknown command '${argv[1] ?? ''}', expected one of: ${group.map((candidate) => candidate.name).join(', ')}`
      : `quire: unknown command '${argv.join(' ')}'\n\n${usage(commands)}`);
    return EXIT_USAGE;
  }
  let loaded: Command;
  try {
    loaded = await command.load();
  } catch (error) {
    io.err(`quire ${command.name}: its code could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall Quire`);
    return EXIT_PROBLEMS;
  }
  try {
    return await loaded.run(argv.slice(command.name.split(' ').length), io);
  } catch (error) {
    // A command's own failure not caught where it happened (a damaged audit head, a close that failed):
    // said in a line, exit 1, not a stack trace.
    io.err(`quire ${command.name}: ${isKernelError(error) ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error)}`);
    return EXIT_PROBLEMS;
  }
}
