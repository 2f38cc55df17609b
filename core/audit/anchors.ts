import { existsSync } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from '../errors.js';
import { diskFull } from '../fs/disk-full.js';
import type { Workspace } from '../workspace.js';
import type { AuditHead } from './verify-audit.js';

/**
 * A head of the log kept somewhere the log's writer does not rewrite along with it: a snapshot record,
 * `audit/anchors.jsonl`, or a person's own copy given back on the command line. A log rewritten with
 * its whole chain and head recomputed still verifies as a chain; it no longer has the anchored hash.
 */
export interface AuditAnchor extends AuditHead {
  /** Where the anchor comes from, as verify names it: `snapshot <id>`, `anchors.jsonl line 3`, `--anchor 12`. */
  source: string;
}

const HASH = /^[0-9a-f]{64}$/;
const ANCHORS_FILE = 'anchors.jsonl';

function isHead(value: unknown): value is AuditHead {
  const head = value as Partial<AuditHead> | null;
  return typeof head === 'object' && head !== null && Number.isInteger(head.seq) && (head.seq ?? -1) >= 0 && typeof head.hash === 'string' && HASH.test(head.hash);
}

/** `seq:hash`, as `quire audit anchor` prints it; undefined when the text is not one. */
export function parseAnchorText(text: string, source: string): AuditAnchor | undefined {
  const match = /^(\d+):([0-9a-f]{64})$/.exec(text.trim());
  return match ? { seq: Number(match[1]), hash: match[2]!, source } : undefined;
}

export function formatAnchor(head: AuditHead): string {
  return `${head.seq}:${head.hash}`;
}

/** The anchors a workspace holds, and lines of its anchors file that are not anchors (reported, and failing verify). */
export async function workspaceAnchors(workspace: Workspace): Promise<{ anchors: AuditAnchor[]; problems: string[] }> {
  const fromFile = await anchorsFile(join(workspace.auditDir, ANCHORS_FILE));
  return { anchors: [...await snapshotAnchors(join(workspace.root, 'repo', 'snapshots')), ...fromFile.anchors], problems: fromFile.problems };
}

/** Every snapshot records the audit head it was taken at (`auditHead`); older snapshots have none. */
async function snapshotAnchors(folder: string): Promise<AuditAnchor[]> {
  const names = (await readdir(folder).catch(() => [] as string[])).filter((name) => name.endsWith('.json')).sort();
  const anchors: AuditAnchor[] = [];
  for (const name of names) {
    try {
      const record = JSON.parse(await readFile(join(folder, name), 'utf8')) as { auditHead?: unknown };
      if (isHead(record.auditHead)) anchors.push({ seq: record.auditHead.seq, hash: record.auditHead.hash, source: `snapshot ${name.slice(0, -5)}` });
    } catch {
      // A snapshot record that does not parse is the snapshots' own problem (snapshot verify); it anchors nothing.
    }
  }
  return anchors;
}

async function anchorsFile(file: string): Promise<{ anchors: AuditAnchor[]; problems: string[] }> {
  if (!existsSync(file)) return { anchors: [], problems: [] };
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  // An unterminated last line is an anchor append cut short; it was never printed as recorded.
  lines.pop();
  const anchors: AuditAnchor[] = [];
  const problems: string[] = [];
  lines.forEach((line, index) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (isHead(value)) anchors.push({ seq: value.seq, hash: value.hash, source: `${ANCHORS_FILE} line ${index + 1}` });
    else problems.push(`${ANCHORS_FILE} line ${index + 1} is not an anchor ({"seq", "hash"})`);
  });
  return { anchors, problems };
}

/** Appends an anchor to `audit/anchors.jsonl`, durably; a failed append is cut back, as the log's are. */
export async function recordAnchor(workspace: Workspace, head: AuditHead): Promise<void> {
  const file = join(workspace.auditDir, ANCHORS_FILE);
  const handle = await open(file, 'a', 0o600);
  try {
    const before = (await handle.stat()).size;
    try {
      await handle.appendFile(`${JSON.stringify({ seq: head.seq, hash: head.hash, time: new Date().toISOString() })}\n`);
      await handle.datasync();
    } catch (error) {
      await handle.truncate(before).catch(() => undefined);
      throw diskFull(error, { what: 'audit anchors', file: `audit/${ANCHORS_FILE}` });
    }
  } finally {
    await handle.close();
  }
}

/** An anchor given on the command line; anything but seq:hash is refused rather than silently ignored. */
export function checkGivenAnchor(text: string, index: number): AuditAnchor {
  const anchor = parseAnchorText(text, `--anchor ${text.split(':')[0]}`);
  if (!anchor) throw new KernelError('INVALID_INPUT', `--anchor #${index + 1} '${text.slice(0, 80)}' is not seq:hash (as 'quire audit anchor' prints it)`);
  return anchor;
}
