import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

interface IndexReport {
  outcome: 'done' | 'breaker' | 'stopped' | 'none';
  model?: string;
  total?: number;
  indexed?: number;
  pending?: number;
  failed?: number;
  gaveUp?: number;
  ignoredTotal?: number;
  ignored?: Record<string, number>;
  lastError?: string | null;
  unavailable?: string;
}

export const indexEmbeddingsCommand: Command = {
  name: 'index embeddings',
  summary: 'embed the blocks that need it for semantic search, showing progress',
  help: `Usage: quire index embeddings [--reindex | --retry-failed] [--workspace <dir>]

Embeds every block that has no current vector with the embedder quire.json selects
(plugins.search-semantic.config.embedder) and waits until each is embedded or has failed. A kernel
serving the workspace does the same in the background; this command is for a first run, a new model,
or to see the indexer's health. Blocks of notebooks marked "egress": "local-only" are never sent to a
remote embedder.

Options:
      --reindex           embed every block again (the old vectors answer until replaced)
      --retry-failed      retry the blocks whose embedding failed, also those given up
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, {
      workspace: { type: 'string', short: 'w' }, reindex: { type: 'boolean' }, 'retry-failed': { type: 'boolean' },
    }, io, 'index embeddings', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    if (parsed.values.reindex && parsed.values['retry-failed']) {
      io.err('quire index embeddings: give one of --reindex and --retry-failed: --reindex embeds every block again, those that failed too');
      return EXIT_USAGE;
    }
    const root = String(parsed.values.workspace ?? './workspace');
    try {
      const started = Date.now();
      const report = await withKernel(root, io, (kernel) => callAction(kernel, 'embeddings_index', {
        ...(parsed.values.reindex ? { reindex: true } : {}), ...(parsed.values['retry-failed'] ? { retryFailed: true } : {}),
      }, io)) as unknown as IndexReport;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (report.outcome === 'none') {
        io.err(`quire index embeddings: no embedder: ${report.unavailable ?? 'set plugins.search-semantic.config.embedder in quire.json'}`);
        return EXIT_PROBLEMS;
      }
      const ignored = Object.entries(report.ignored ?? {}).filter(([, n]) => n > 0).map(([reason, n]) => `${n} ${reason}`).join(', ');
      io.out(`${report.indexed ?? 0} of ${report.total ?? 0} block(s) embedded with ${report.model ?? '?'} in ${seconds} s; ${report.pending ?? 0} pending, ${report.failed ?? 0} failed${ignored ? `, ignored: ${ignored}` : ''}`);
      if (report.outcome === 'breaker') {
        io.err(`the embedder failed: ${report.lastError ?? 'unknown error'}; the rest is tried again later (or run this command again)`);
        return EXIT_PROBLEMS;
      }
      if (report.outcome === 'stopped') return io.err('stopped; what was embedded is kept'), EXIT_PROBLEMS;
      if ((report.failed ?? 0) > 0) {
        io.err(`${report.failed} block(s) failed (last error: ${report.lastError ?? 'unknown'}); retry with --retry-failed`);
        return EXIT_PROBLEMS;
      }
      return EXIT_OK;
    } catch (error) {
      io.err(`quire index embeddings: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};
