import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readKernelConfigFile } from '../../config/kernel-config.js';
import { UsageLedger, type UsageGrouping, type UsageRow } from '../../usage/usage-ledger.js';
import { Workspace } from '../../workspace.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';
import { assertWorkspaceExists, describeError } from '../one-shot-kernel.js';

const GROUPINGS: readonly UsageGrouping[] = ['day', 'session', 'model'];

export function formatUsageRows(rows: readonly UsageRow[]): string[] {
  const cost = (row: UsageRow) => (row.cost === null ? `unknown (${row.unpricedTokens} tokens unpriced)` : `$${row.cost.toFixed(4)}`);
  return rows.map((row) => `${row.key}  ${row.requests} requests  in ${row.input} (cached ${row.cachedInput})  out ${row.output} (reasoning ${row.reasoning})  ${cost(row)}`);
}

/**
 * `quire usage`: the usage ledger by day, session or model, priced from quire.json's usage.prices.
 * Reads `.quire/usage.db` beside a running kernel (SQLite WAL), so it needs no lock on the workspace.
 */
export const usageCommand: Command = {
  name: 'usage',
  summary: 'model and embedding usage and cost, by day, session or model',
  help: [
    'Usage: quire usage [--by day|session|model] [--since <YYYY-MM-DD>] [--workspace <dir>]',
    '',
    'Options:',
    '  -b, --by <grouping>     day (default), session or model',
    '      --since <date>      from this UTC day on',
    '  -w, --workspace <dir>   workspace folder (default: ./workspace)',
    '',
    'Costs come from usage.prices in quire.json (USD per million tokens); a model without a price',
    'is shown as unknown, never as free.',
  ].join('\n'),
  async run(args, io: CliIO) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, by: { type: 'string', short: 'b' }, since: { type: 'string' } }, io, 'usage', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const by = String(parsed.values.by ?? 'day') as UsageGrouping;
    if (!GROUPINGS.includes(by)) {
      io.err(`quire usage: --by must be day, session or model, not '${by}'`);
      return EXIT_USAGE;
    }
    const since = parsed.values.since === undefined ? undefined : String(parsed.values.since);
    // A day that exists: 2024-13-45 or 2024-02-31 answered "no usage recorded yet".
    if (since !== undefined && !isDay(since)) {
      io.err(`quire usage: --since must be a day as YYYY-MM-DD, not '${since}'`);
      return EXIT_USAGE;
    }
    try {
      const root = String(parsed.values.workspace ?? './workspace');
      // A mistyped path answered "no usage recorded yet" (exit 0).
      assertWorkspaceExists(root);
      const workspace = new Workspace(root);
      const file = join(workspace.privateDir, 'usage.db');
      if (!existsSync(file)) {
        io.out('no usage recorded yet');
        return EXIT_OK;
      }
      const prices = (await readKernelConfigFile(workspace.configFile)).usage?.prices ?? {};
      const ledger = new UsageLedger(file, () => prices);
      try {
        const scope = since !== undefined ? { since: `${since}T00:00:00.000Z` } : {};
        const rows = ledger.report(by, scope);
        if (rows.length === 0) io.out('no usage recorded yet');
        for (const line of formatUsageRows(rows)) io.out(line);
        if (rows.length > 0) for (const line of formatUsageRows([ledger.total(scope)])) io.out(line);
      } finally {
        ledger.close();
      }
      return EXIT_OK;
    } catch (error) {
      io.err(`quire usage: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

/** YYYY-MM-DD of a day that exists (Date rolls 2024-02-31 over into March). */
function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const time = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(text);
}
