import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

/** `quire snapshot <verb>`: the snapshots plugin's actions from the terminal, as the person at it. */
function snapshotCommand(verb: 'create' | 'list' | 'diff' | 'rollback' | 'verify', summary: string, usage: string, input: (positionals: string[], values: Record<string, string | boolean | undefined>) => Record<string, unknown> | undefined,
  print: (result: Record<string, unknown>, io: CliIO) => number): Command {
  return {
    name: `snapshot ${verb}`,
    summary,
    help: `Usage: quire snapshot ${usage} [--workspace <dir>]\n\nOptions:\n  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
    async run(args, io) {
      const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, memo: { type: 'string', short: 'm' } }, io, `snapshot ${verb}`);
      if (!parsed) return EXIT_USAGE;
      if (parsed.values.help) return io.out(this.help), EXIT_OK;
      const body = input(parsed.positionals, parsed.values);
      if (!body) {
        io.err(`quire snapshot ${verb}: ${this.help.split('\n')[0]}`);
        return EXIT_USAGE;
      }
      try {
        const result = await withKernel(String(parsed.values.workspace ?? './workspace'), io, (kernel) => callAction(kernel, `snapshot_${verb}`, body, io));
        return print(result, io);
      } catch (error) {
        io.err(`quire snapshot ${verb}: ${describeError(error)}`);
        return EXIT_PROBLEMS;
      }
    },
  };
}

const lines = (items: unknown): string[] => (Array.isArray(items) ? items.map(String) : []);

export const snapshotCommands: readonly Command[] = [
  snapshotCommand('create', 'take a snapshot of the notes', 'create [--memo <text>]', (_p, values) => ({ memo: typeof values.memo === 'string' ? values.memo : 'from the command line' }),
    (result, io) => { io.out(`snapshot ${String(result.id)}: ${String(result.files)} file(s)`); return EXIT_OK; }),
  snapshotCommand('list', 'list snapshots, newest first', 'list', () => ({}), (result, io) => {
    for (const item of (result.snapshots ?? []) as { id: string; created: string; origin: string; memo: string; tags: string[] }[]) io.out(`${item.id}  ${item.created}  ${item.origin}  ${item.memo}${item.tags.length ? `  [${item.tags.join(', ')}]` : ''}`);
    return EXIT_OK;
  }),
  snapshotCommand('diff', 'what changed since a snapshot (or between two)', 'diff <from> [<to>]', ([from, to]) => (from ? { from, ...(to ? { to } : {}) } : undefined), (result, io) => {
    for (const path of lines(result.added)) io.out(`+ ${path}`);
    for (const path of lines(result.removed)) io.out(`- ${path}`);
    for (const path of lines(result.changed)) io.out(`~ ${path}`);
    return EXIT_OK;
  }),
  snapshotCommand('rollback', 'make the notes exactly as in a snapshot', 'rollback <id>', ([id]) => (id ? { id } : undefined), (result, io) => {
    io.out(`restored ${lines(result.added).length + lines(result.changed).length} file(s), removed ${lines(result.removed).length}`);
    return EXIT_OK;
  }),
  snapshotCommand('verify', 'check every stored object against its hash', 'verify', () => ({}), (result, io) => {
    const damaged = (result.damaged ?? []) as { object: string; reason: string }[];
    io.out(`${String(result.snapshots)} snapshot(s), ${String(result.objects)} object(s), ${damaged.length} damaged`);
    for (const item of damaged) io.err(`damaged ${item.object}: ${item.reason}`);
    return damaged.length > 0 ? EXIT_PROBLEMS : EXIT_OK;
  }),
];
