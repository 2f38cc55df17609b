import { ConflictError } from '../errors.js';
import { copyPrefix } from './json-values.js';
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
  // One copy of the history (a spread: slicing the store's frozen arrays takes V8's slow path).
  const merged = copyPrefix(entries, anchorIndex);
  merged.push(anchor);
  for (let i = anchorIndex + 1; i < entries.length; i++) if (UI_ENTRIES.has(entries[i]!.type)) merged.push(entries[i]!);
  turn.delta.forEach((message, i) => merged.push({
    ...message,
    id: `runtime_${turn.turnID}_${i}`,
    type: 'assistant',
    timestamp: turn.updatedAt,
    ...(message.toolCalls ? { toolCalls: message.toolCalls.map(settleToolCall) } : {}),
  }));
  if (turn.draftContent.trim() !== '') {
    merged.push({ id: `runtime_draft_${turn.turnID}`, type: 'assistant', content: turn.draftContent, timestamp: turn.updatedAt, ...(turn.draftRoundID ? { roundID: turn.draftRoundID } : {}),
      ...(turn.draftNotebooks !== undefined ? { notebooks: turn.draftNotebooks } : {}) });
  }
  const recorded = new Set<string>();
  for (const entry of merged) if (entry.type === 'snapshot') recorded.add(String(entry.snapshotID ?? ''));
  for (const snapshotID of turn.snapshotIDs) {
    if (!recorded.has(snapshotID)) merged.push({ id: `runtime_snapshot_${snapshotID}`, type: 'snapshot', snapshotID, timestamp: turn.updatedAt });
  }
  return merged;
}

/** Where a turn's user entry is in the stored history: the entries before it are shown as stored. */
export function findAnchor(entries: readonly SessionEntry[], userEntryID: string): number {
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
