import { KernelError, isKernelError } from '../errors.js';
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

/**
 * A call that took effect but whose audit line could not be written (a full disk, a log closing): the
 * caller is told it ran and not to repeat it (the audit's own error said "try again", and a retried
 * create made a second document). Its result is not carried: an error's details reach MCP clients and
 * the log as they are, past the filter that holds local-only notes back from a result.
 */
export function ranUnrecorded(entry: RegisteredAction, auditError: unknown): KernelError {
  const code = isKernelError(auditError) ? auditError.code : 'INTERNAL';
  const reason = auditError instanceof Error ? auditError.message : String(auditError);
  return new KernelError(code, `${entry.wireName} ran and took effect, but its audit record could not be written (${reason}); do not repeat it: read what it changed instead`, {
    details: { ...(isKernelError(auditError) ? auditError.details : {}), ran: true },
    cause: auditError,
  });
}
