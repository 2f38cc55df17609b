import { join } from 'node:path';
import { readJsonFile } from '../util/json-file.js';
import type { Workspace } from '../workspace.js';
import { workspaceAnchors, type AuditAnchor } from './anchors.js';
import { verifyAuditLog, type AuditHead, type AuditVerification } from './verify-audit.js';

export interface WorkspaceVerification {
  result: AuditVerification;
  /** Lines of the anchors file that are not anchors: a damaged anchors file fails verify too. */
  anchorProblems: string[];
}

/**
 * Verifies a workspace's audit log without opening a kernel (`quire audit verify`, `quire audit
 * anchor`): the chain, the head file, and every anchor known (snapshot records, the anchors file, and
 * those `given` by a person).
 */
export async function verifyWorkspaceAudit(workspace: Workspace, given: readonly AuditAnchor[] = []): Promise<WorkspaceVerification> {
  const { anchors, problems } = await workspaceAnchors(workspace);
  const head = await readJsonFile<AuditHead | undefined>(join(workspace.auditDir, 'audit.head.json'), undefined);
  return { result: await verifyAuditLog(join(workspace.auditDir, 'audit.jsonl'), head, [...anchors, ...given]), anchorProblems: problems };
}
