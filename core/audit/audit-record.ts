import { canonicalJson, sha256Hex } from '../canonical-json.js';
import type { Effect, Principal } from '../plugin-api.js';

export const GENESIS_HASH = '0'.repeat(64);

/** ok / error: the handler ran; refused: stopped before it ran (role, read-only, deny rule); egress_denied: undeclared egress. */
export type AuditOutcome = 'ok' | 'error' | 'refused' | 'egress_denied';

/** What an audit line says, before the chain fields are added. */
export interface AuditEntry {
  principal: Pick<Principal, 'kind' | 'name' | 'role'> & { sessionId?: string; turnId?: string; client?: string };
  plugin: string;
  tool: string;
  action: string;
  effects: Effect[];
  argsHash: string;
  outcome: AuditOutcome;
  errorCode?: string;
  /** Short, non-secret facts (the refused egress target, the grant used…). */
  details?: Record<string, unknown>;
}

/** One line of audit.jsonl: the entry, its position, and the hashes that chain it to the line before. */
export interface AuditRecord extends AuditEntry {
  seq: number;
  time: string;
  prev: string;
  hash: string;
}

export function hashRecord(record: Omit<AuditRecord, 'hash'>): string {
  return sha256Hex(canonicalJson(record));
}

export function sealRecord(entry: AuditEntry, seq: number, prev: string, time: Date): AuditRecord {
  const unsealed: Omit<AuditRecord, 'hash'> = { ...entry, seq, time: time.toISOString(), prev };
  return { ...unsealed, hash: hashRecord(unsealed) };
}
