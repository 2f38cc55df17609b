import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

export const indexRebuildCommand: Command = {
  name: 'index rebuild',
  summary: 'rebuild the SQLite index from the document files',
  help: `Usage: quire index rebuild [--workspace <dir>]

Empties <workspace>/index/quire.db and fills it again from the files under data/. The files are not
changed. Files that are not valid documents are listed and skipped.

Options:
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' } }, io, 'index rebuild', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const root = String(parsed.values.workspace ?? './workspace');
    try {
      const started = Date.now();
      const report = await withKernel(root, io, (kernel) => callAction(kernel, 'index_rebuild', {}, io));
      const problems = report.problems as { path: string; reason: string }[];
      io.out(`indexed ${String(report.documents)} document(s), ${String(report.blocks)} block(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      for (const problem of problems) io.err(`skipped ${problem.path}: ${problem.reason}`);
      return problems.length > 0 ? EXIT_PROBLEMS : EXIT_OK;
    } catch (error) {
      io.err(`quire index rebuild: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};
