import { checkGivenAnchor, type AuditAnchor } from '../../audit/anchors.js';
import type { AuditVerification } from '../../audit/verify-audit.js';
import { verifyWorkspaceAudit } from '../../audit/verify-workspace.js';
import { isKernelError } from '../../errors.js';
import { Workspace } from '../../workspace.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';
import { assertWorkspaceExists } from '../workspace-check.js';

/** Torn appends, recovered or not: facts a person should see, none of them tampering. */
function endNotes(result: AuditVerification): string[] {
  const notes = result.recovered.map((tail) => `recovered torn end: ${tail.bytes} byte(s) after seq ${tail.afterSeq} set aside in ${tail.keptIn} (${tail.kept}), recorded at seq ${tail.seq}`);
  for (const name of result.unrecorded) notes.push(`${name}: a torn end kept beside the log that no line records (set aside at a start that then had no room to say so)`);
  for (const stray of result.stray) notes.push(`line ${stray.line}: ${stray.bytes} stray byte(s) before the record, left by an append that failed on an older kernel`);
  if (result.torn) notes.push(`torn end: ${result.torn.bytes} byte(s) after seq ${result.last.seq} of an append that never completed; the next start sets them aside`);
  if (result.headLags !== undefined) notes.push(`the head file is ${result.headLags} line(s) behind the log, at a line the log has as it says: a kernel is running (its head follows its lines by about 100 ms), or a crash left it behind (the next start catches it up)`);
  return notes;
}

const span = (from: number, to: number): string => (from === to ? `line ${from}` : `lines ${from}-${to}`);

/** Which lines the anchors vouch for, and which come after the last one (a rewrite there would not show). */
function anchorNotes(result: AuditVerification): string[] {
  const checked = result.anchors.length;
  if (checked === 0) return result.last.seq === 0 ? [] : [`no anchors: ${span(1, result.last.seq)} unanchored ('quire audit anchor' records one; each snapshot records one)`];
  const notes = [`anchors: ${checked} checked, ${result.anchors.filter((check) => check.ok).length} match`];
  if (result.anchoredThrough > 0) {
    const last = result.anchors.filter((check) => check.ok && check.anchor.seq === result.anchoredThrough).map((check) => check.anchor.source);
    notes.push(`anchored: ${span(1, result.anchoredThrough)} (through seq ${result.anchoredThrough}: ${last.join(', ')})`);
  }
  if (result.last.seq > result.anchoredThrough) notes.push(`unanchored: ${span(result.anchoredThrough + 1, result.last.seq)}, after the last anchor`);
  return notes;
}

/** `--anchor` values, repeated or not; undefined (after saying why) when one is not seq:hash. */
export function givenAnchors(raw: unknown, io: CliIO, command: string): AuditAnchor[] | undefined {
  const texts = Array.isArray(raw) ? raw.map(String) : raw === undefined ? [] : [String(raw)];
  try {
    return texts.map((text, index) => checkGivenAnchor(text, index));
  } catch (error) {
    if (!isKernelError(error)) throw error;
    io.err(`quire ${command}: ${error.message}`);
    return undefined;
  }
}

export const auditVerifyCommand: Command = {
  name: 'audit verify',
  summary: "check the audit log's hash chain and its anchors",
  help: `Usage: quire audit verify [--workspace <dir>] [--anchor <seq:hash>]...

Recomputes the hash chain of <workspace>/audit/audit.jsonl and reports the first line that was
altered, removed or reordered, or that lines were cut from the end. Then holds the log against every
anchor it knows: the audit head each snapshot recorded, <workspace>/audit/anchors.jsonl ('quire audit
anchor'), and each --anchor given. A log rewritten with its whole chain recomputed still chains, but
no longer matches an anchor taken before the rewrite. Says which lines are anchored and which come
after the last anchor. A torn end (an append cut short by a crash or a full disk) is reported as such.
Exits 1 if the chain is broken or an anchor does not match.

Options:
  -w, --workspace <dir>   workspace folder (default: ./workspace)
  -a, --anchor <seq:hash> an anchor kept outside the workspace, as 'quire audit anchor' printed it (repeatable)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, anchor: { type: 'string', short: 'a', multiple: true } }, io, 'audit verify', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const given = givenAnchors(parsed.values.anchor, io, 'audit verify');
    if (!given) return EXIT_USAGE;
    const root = String(parsed.values.workspace ?? './workspace');
    // As every command that opens a workspace: one not there, a file, or a folder of other files is
    // refused, exit 1 (a mistyped path printed "audit log intact: 0 line(s)", and anchor made audit/ in it).
    try {
      assertWorkspaceExists(root);
    } catch (error) {
      io.err(`quire audit verify: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT_PROBLEMS;
    }
    const { result, anchorProblems } = await verifyWorkspaceAudit(new Workspace(root), given);
    for (const note of [...endNotes(result), ...anchorNotes(result)]) io.out(note);
    const mismatches = result.anchors.filter((candidate) => !candidate.ok);
    for (const check of mismatches) io.err(`anchor mismatch: ${check.reason}`);
    for (const problem of anchorProblems) io.err(`anchors file damaged: ${problem}`);
    if (!result.ok) {
      const byAnchor = mismatches.some((check) => check.reason === result.reason);
      io.err(byAnchor
        ? `audit log rewritten: it chains, but does not match ${mismatches.length} anchor(s) taken before`
        : `audit log broken at line ${result.line} of ${result.lines}: ${result.reason}`);
      return EXIT_PROBLEMS;
    }
    if (anchorProblems.length > 0) return EXIT_PROBLEMS;
    io.out(`audit log intact: ${result.lines} line(s)`);
    return EXIT_OK;
  },
};
