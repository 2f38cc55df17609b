import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

/** `quire snapshot <verb>`: the snapshots plugin's actions from the terminal, as the person at it. */
function snapshotCommand(verb: 'create' | 'list' | 'diff' | 'rollback' | 'verify' | 'delete', summary: string, usage: string,
  input: (positionals: string[], values: Record<string, string | boolean | undefined>) => Record<string, unknown> | string | undefined,
  print: (result: Record<string, unknown>, io: CliIO) => number, options: { flags?: Record<string, { type: 'string'; short?: string }>; help?: string; maxPositionals?: number; hint?: string } = {}): Command {
  return {
    name: `snapshot ${verb}`,
    summary,
    help: `Usage: quire snapshot ${usage} [--workspace <dir>]\n\nOptions:\n${options.help ?? ''}  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
    async run(args, io) {
      const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, ...options.flags }, io, `snapshot ${verb}`, { max: options.maxPositionals ?? 0, ...(options.hint ? { hint: options.hint } : {}) });
      if (!parsed) return EXIT_USAGE;
      if (parsed.values.help) return io.out(this.help), EXIT_OK;
      const body = input(parsed.positionals, parsed.values);
      if (!body || typeof body === 'string') {
        // A string says what was wrong (`--limit abc` showed only the usage line).
        io.err(`quire snapshot ${verb}: ${body || this.help.split('\n')[0]}`);
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

/** `list`'s input; what was wrong for a limit that is not a whole number (the kernel checks its range). */
function listInput(positionals: string[], values: Record<string, string | boolean | undefined>): Record<string, unknown> | string | undefined {
  if (positionals.length > 0) return undefined;
  const limit = typeof values.limit === 'string' && /^\d+$/.test(values.limit.trim()) ? Number(values.limit) : undefined;
  if (typeof values.limit === 'string' && limit === undefined) return `--limit must be a whole number, not '${values.limit.slice(0, 40)}'`;
  return { ...(limit !== undefined ? { limit } : {}), ...(typeof values.before === 'string' ? { before: values.before } : {}) };
}

export const snapshotCommands: readonly Command[] = [
  snapshotCommand('create', 'take a snapshot of the notes', 'create [--memo <text>]', (_p, values) => ({ memo: typeof values.memo === 'string' ? values.memo : 'from the command line' }),
    (result, io) => { io.out(`snapshot ${String(result.id)}: ${String(result.files)} file(s)`); return EXIT_OK; },
    { flags: { memo: { type: 'string', short: 'm' } }, help: '  -m, --memo <text>       what the snapshot is for\n', hint: 'quote a memo that holds spaces' }),
  snapshotCommand('list', 'list snapshots, newest first', 'list [--limit <n>] [--before <id>]', (positionals, values) => listInput(positionals, values), (result, io) => {
    for (const item of (result.snapshots ?? []) as { id: string; created: string; origin: string; memo: string; tags: string[] }[]) io.out(`${item.id}  ${item.created}  ${item.origin}  ${item.memo}${item.tags.length ? `  [${item.tags.join(', ')}]` : ''}`);
    if (typeof result.next === 'string') io.err(`${String(result.total)} snapshots in all; older ones: quire snapshot list --before ${result.next}`);
    return EXIT_OK;
  }, { flags: { limit: { type: 'string', short: 'n' }, before: { type: 'string' } }, help: '  -n, --limit <n>         at most n snapshots (default 200, at most 1000)\n      --before <id>       the snapshots older than this one\n' }),
  snapshotCommand('diff', 'what changed since a snapshot (or between two)', 'diff <from> [<to>]', ([from, to]) => (from ? { from, ...(to ? { to } : {}) } : undefined), (result, io) => {
    // The notes' files, then the skills' (they were left out: a removed skill's diff printed nothing).
    const changes = withSkills(result);
    for (const path of changes.added) io.out(`+ ${path}`);
    for (const path of changes.removed) io.out(`- ${path}`);
    for (const path of changes.changed) io.out(`~ ${path}`);
    if (changes.added.length + changes.removed.length + changes.changed.length === 0) io.out('no changes');
    return EXIT_OK;
  }, { maxPositionals: 2 }),
  snapshotCommand('rollback', 'make the notes exactly as in a snapshot', 'rollback <id>', ([id]) => (id ? { id } : undefined), (result, io) => {
    const changes = withSkills(result);
    io.out(`restored ${changes.added.length + changes.changed.length} file(s), removed ${changes.removed.length}`);
    return EXIT_OK;
  }, { maxPositionals: 1 }),
  snapshotCommand('delete', 'delete snapshots and what only they stored', 'delete <id>...', (ids) => (ids.length > 0 ? { ids: [...new Set(ids)] } : undefined), (result, io) => {
    // What only they stored is removed after the answer (it said "removed undefined stored object(s)").
    io.out(`deleted ${lines(result.deleted).length} snapshot(s); what only they stored is removed in the background`);
    return EXIT_OK;
  }, { maxPositionals: Number.POSITIVE_INFINITY }),
  snapshotCommand('verify', 'check every stored object against its hash', 'verify', () => ({}), (result, io) => {
    const damaged = (result.damaged ?? []) as { object: string; reason: string }[];
    io.out(`${String(result.snapshots)} snapshot(s), ${String(result.objects)} object(s), ${damaged.length} damaged`);
    for (const item of damaged) io.err(`damaged ${item.object}: ${item.reason}`);
    return damaged.length > 0 ? EXIT_PROBLEMS : EXIT_OK;
  }),
];

/** A diff's or rollback's files: the notes' as they are, the skills' under `skills/`. */
function withSkills(result: Record<string, unknown>): { added: string[]; removed: string[]; changed: string[] } {
  const skills = (result.skills ?? {}) as Record<string, unknown>;
  const both = (key: 'added' | 'removed' | 'changed'): string[] => [...lines(result[key]), ...lines(skills[key]).map((path) => `skills/${path}`)];
  return { added: both('added'), removed: both('removed'), changed: both('changed') };
}
