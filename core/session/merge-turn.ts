import { ConflictError } from '../errors.js';
import { NOT_EXECUTED, RESULT_UNKNOWN, type ActiveTurn, type SessionEntry, type ToolCallRecord } from './session-types.js';

/** Entries the person sees but the model does not; they stay where they were. */
const UI_ENTRIES: ReadonlySet<string> = new Set(['thinking', 'confirm', 'question', 'snapshot', 'rollback']);

/**
 * The entries of a session with a runtime turn folded in (REFERENCE.md §4): up to the user entry the
 * turn answers, the UI entries that followed it, the turn's assistant messages (tool calls left
 * unfinished get a text that says whether they ran), a draft if there is one, and snapshot entries.
 */
export function mergeRuntimeTurn(entries: readonly SessionEntry[], turn: ActiveTurn): SessionEntry[] {
  const anchorIndex = findAnchor(entries, turn.userEntryID);
  if (anchorIndex < 0) throw new ConflictError('CONFLICT', 'agent runtime user entry not found', { details: { reason: 'anchor_missing', userEntryID: turn.userEntryID } });
  // The anchor is copied only when it changes: an unchanged entry stays the stored (shared) object.
  const stored = entries[anchorIndex]!;
  const anchor = turn.mode === 'regenerate' && turn.userContent !== undefined ? { ...stored, content: turn.userContent } : stored;
  const before = entries.slice(0, anchorIndex);
  const uiAfter = entries.slice(anchorIndex + 1).filter((entry) => UI_ENTRIES.has(entry.type));
  const assistants = turn.delta.map((message, i): SessionEntry => ({
    ...message,
    id: `runtime_${turn.turnID}_${i}`,
    type: 'assistant',
    timestamp: turn.updatedAt,
    ...(message.toolCalls ? { toolCalls: message.toolCalls.map(settleToolCall) } : {}),
  }));
  const draft: SessionEntry[] = turn.draftContent.trim() !== ''
    ? [{ id: `runtime_draft_${turn.turnID}`, type: 'assistant', content: turn.draftContent, timestamp: turn.updatedAt, ...(turn.draftRoundID ? { roundID: turn.draftRoundID } : {}) }]
    : [];
  const merged = [...before, anchor, ...uiAfter, ...assistants, ...draft];
  const recorded = new Set(merged.filter((entry) => entry.type === 'snapshot').map((entry) => String(entry.snapshotID ?? '')));
  for (const snapshotID of turn.snapshotIDs) {
    if (!recorded.has(snapshotID)) merged.push({ id: `runtime_snapshot_${snapshotID}`, type: 'snapshot', snapshotID, timestamp: turn.updatedAt });
  }
  return merged;
}

function findAnchor(entries: readonly SessionEntry[], userEntryID: string): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type === 'user' && (userEntryID === '' || entry.id === userEntryID)) return i;
  }
  return -1;
}

/** A call without a result either never ran (pending) or may have: the model must not repeat the second. */
export function settleToolCall(call: ToolCallRecord): ToolCallRecord {
  if (call.result !== undefined) return call;
  return call.state === 'pending'
    ? { ...call, state: 'skipped', result: NOT_EXECUTED }
    : { ...call, state: 'unknown', result: RESULT_UNKNOWN };
}
