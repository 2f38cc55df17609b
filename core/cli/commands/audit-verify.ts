import { existsSync } from 'node:fs';
import { verifyWorkspaceAudit } from '../../audit/audit-log.js';
import type { AuditVerification } from '../../audit/verify-audit.js';
import { Workspace } from '../../workspace.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';

/** Torn appends, recovered or not: facts a person should see, none of them tampering. */
function endNotes(result: AuditVerification): string[] {
  const notes = result.recovered.map((tail) => `recovered torn end: ${tail.bytes} byte(s) after seq ${tail.afterSeq} set aside in ${tail.keptIn} (${tail.kept}), recorded at seq ${tail.seq}`);
  for (const stray of result.stray) notes.push(`line ${stray.line}: ${stray.bytes} stray byte(s) before the record, left by an append that failed on an older kernel`);
  if (result.torn) notes.push(`torn end: ${result.torn.bytes} byte(s) after seq ${result.last.seq} of an append that never completed; the next start sets them aside`);
  return notes;
}

export const auditVerifyCommand: Command = {
  name: 'audit verify',
  summary: "check the audit log's hash chain",
  help: `Usage: quire audit verify [--workspace <dir>]

Recomputes the hash chain of <workspace>/audit/audit.jsonl and reports the first line that was
altered, removed or reordered, or that lines were cut from the end. Exits 1 if the chain is broken.

Options:
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' } }, io, 'audit verify');
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const root = String(parsed.values.workspace ?? './workspace');
    if (!existsSync(root)) {
      io.err(`quire audit verify: workspace ${root} does not exist`);
      return EXIT_USAGE;
    }
    const result = await verifyWorkspaceAudit(new Workspace(root));
    for (const note of endNotes(result)) io.out(note);
    if (result.ok) {
      io.out(`audit log intact: ${result.lines} line(s)`);
      return EXIT_OK;
    }
    io.err(`audit log broken at line ${result.line} of ${result.lines}: ${result.reason}`);
    return EXIT_PROBLEMS;
  },
};
