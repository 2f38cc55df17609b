import type { AuditEntry, AuditOutcome } from '../audit/audit-record.js';
import type { Principal } from '../plugin-api.js';
import type { RegisteredAction } from '../registry/action-registry.js';

/** The audit line for one call: who, which action with which effects, the arguments' hash, what came of it. */
export function auditEntryFor(
  entry: RegisteredAction,
  principal: Principal,
  argsHash: string,
  outcome: AuditOutcome,
  errorCode?: string,
  details: Record<string, unknown> = {},
): AuditEntry {
  return {
    principal: {
      kind: principal.kind, name: principal.name, role: principal.role,
      ...(principal.sessionId !== undefined ? { sessionId: principal.sessionId } : {}),
      ...(principal.turnId !== undefined ? { turnId: principal.turnId } : {}),
      ...(principal.client !== undefined ? { client: principal.client } : {}),
    },
    plugin: entry.pluginId, tool: entry.tool, action: entry.action, effects: [...entry.effects],
    argsHash, outcome,
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}
