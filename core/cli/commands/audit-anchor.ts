import { mkdir } from 'node:fs/promises';
import { formatAnchor, recordAnchor } from '../../audit/anchors.js';
import { verifyWorkspaceAudit } from '../../audit/verify-workspace.js';
import { isKernelError } from '../../errors.js';
import { Workspace } from '../../workspace.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';
import { assertWorkspaceExists } from '../workspace-check.js';

export const auditAnchorCommand: Command = {
  name: 'audit anchor',
  summary: 'print the audit head (seq:hash) to keep, and record it as an anchor',
  help: `Usage: quire audit anchor [--workspace <dir>]

Verifies the audit log, then prints its head, the last line's seq and hash, as one line 'seq:hash',
and appends it to <workspace>/audit/anchors.jsonl. Keep the printed line somewhere the workspace's
writers cannot reach (a note, a ticket, a published page): 'quire audit verify --anchor seq:hash'
then shows whether the log up to that line is still the one anchored, even if the whole chain and
the anchors file were rewritten. Refuses (exit 1) a log that does not verify. Can run beside a
serving kernel: it only reads the log.

Options:
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' } }, io, 'audit anchor', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const root = String(parsed.values.workspace ?? './workspace');
    // As every command that opens a workspace: one not there, a file, or a folder of other files is
    // refused, exit 1 (a mistyped path printed "audit log intact: 0 line(s)", and anchor made audit/ in it).
    try {
      assertWorkspaceExists(root);
    } catch (error) {
      io.err(`quire audit anchor: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT_PROBLEMS;
    }
    const workspace = new Workspace(root);
    const { result } = await verifyWorkspaceAudit(workspace);
    if (!result.ok) {
      io.err(`quire audit anchor: the audit log does not verify (line ${result.line}: ${result.reason}); an anchor now would vouch for it. Run 'quire audit verify'`);
      return EXIT_PROBLEMS;
    }
    try {
      await mkdir(workspace.auditDir, { recursive: true });
      await recordAnchor(workspace, result.last);
    } catch (error) {
      if (!isKernelError(error)) throw error;
      io.err(`quire audit anchor: ${error.code}: ${error.message}`);
      return EXIT_PROBLEMS;
    }
    io.out(formatAnchor(result.last));
    return EXIT_OK;
  },
};
