import type { SessionDocument, SessionEntry } from '../../session/session-types.js';
import type { TurnRollbackOutcome } from '../../turn/snapshot-service.js';
import { TURN_START_MEMO } from '../../turn/turn-loop.js';
import type { CliIO } from '../cli-io.js';
import { describeError } from '../one-shot-kernel.js';
import type { ChatBackend, SnapshotSummary } from './chat-backend.js';
import type { Prompter } from './prompter.js';

/** A turn of the session that wrote to the notes, so it can be undone. */
export interface WritingTurn {
  turnId: string;
  /** The start of the person's message that began it. */
  words: string;
  /** When it began (ISO). */
  time: string;
  /** A rollback of it is recorded (with nothing left behind). */
  undone: boolean;
}

const WORDS = 8;
const WORDS_CHARS = 60;

function firstWords(text: string | undefined): string {
  if (!text) return '(message not recorded)';
  const words = text.trim().split(/\s+/);
  const start = words.slice(0, WORDS).join(' ');
  const cut = start.length > WORDS_CHARS ? start.slice(0, WORDS_CHARS) : start;
  return cut.length < text.trim().length ? `${cut}…` : cut;
}

/** Local time to the minute: enough to tell turns apart at a glance. */
function shortTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * A turn wrote iff the snapshots plugin took its "before the first write" snapshot, whose origin names
 * the session and the turn; the session's snapshot entry for it follows the person's message.
 */
export function writingTurns(session: SessionDocument, snapshots: readonly SnapshotSummary[]): WritingTurn[] {
  const prefix = `agent:${session.id}/`;
  const askedIn = new Map<string, SessionEntry>();
  const undone = new Set<string>();
  let lastUser: SessionEntry | undefined;
  for (const entry of session.entries) {
    if (entry.type === 'user') lastUser = entry;
    else if (entry.type === 'snapshot' && lastUser) askedIn.set(String(entry.snapshotID), lastUser);
    else if (entry.type === 'rollback' && Array.isArray(entry.conflicts) && entry.conflicts.length === 0) undone.add(String(entry.turnID));
  }
  const starts = snapshots
    .filter((snapshot) => snapshot.memo === TURN_START_MEMO && snapshot.origin.startsWith(prefix))
    .sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
  const seen = new Set<string>();
  const turns: WritingTurn[] = [];
  for (const snapshot of starts) {
    const turnId = snapshot.origin.slice(prefix.length);
    if (seen.has(turnId)) continue;
    seen.add(turnId);
    const asked = askedIn.get(snapshot.id);
    turns.push({ turnId, words: firstWords(asked?.content), time: asked?.timestamp ?? snapshot.created, undone: undone.has(turnId) });
  }
  return turns;
}

export interface UndoContext {
  backend: ChatBackend;
  io: CliIO;
  prompter: Prompter;
}

/**
 * `/undo [n]`: with a number undoes that writing turn; without, lists them and asks which. Blocks
 * changed again since the turn are conflicts, shown, and left as they are unless the person forces.
 */
export async function undoCommand(argument: string, context: UndoContext): Promise<void> {
  const { backend, io, prompter } = context;
  let turns: WritingTurn[];
  try {
    turns = writingTurns(await backend.session(), await backend.snapshots());
  } catch (error) {
    return io.err(`undo: ${describeError(error)}`);
  }
  if (turns.length === 0) return io.err('no turn of this session has written anything: nothing to undo');
  let choice = argument;
  if (choice === '') {
    io.out('Turns of this session that wrote:');
    turns.forEach((turn, index) => io.out(`  ${index + 1}. ${turn.words}  (${shortTime(turn.time)})${turn.undone ? ' [undone]' : ''}`));
    const typed = await prompter.ask(`Undo which turn? [1-${turns.length}, Enter for none]: `);
    choice = typed.line?.trim() ?? '';
    if (choice === '') return io.out('nothing undone');
  }
  const turn = /^\d+$/.test(choice) ? turns[Number(choice) - 1] : undefined;
  if (!turn) return io.err(`no writing turn ${choice}: /undo lists them (1 to ${turns.length})`);
  await undoTurn(turn, context);
}

async function undoTurn(turn: WritingTurn, context: UndoContext): Promise<void> {
  const { io, prompter } = context;
  const first = await rollback(turn, false, context);
  if (!first || first.conflicts.length === 0) return;
  const typed = await prompter.ask('Undo those too, overwriting the later changes (force)? [y/N]: ', { fresh: true });
  if (!/^y(es)?$/i.test(typed.line?.trim() ?? '')) return io.out('the later changes were kept');
  await rollback(turn, true, context);
}

async function rollback(turn: WritingTurn, force: boolean, { backend, io }: UndoContext): Promise<TurnRollbackOutcome | undefined> {
  let result: TurnRollbackOutcome;
  try {
    result = await backend.rollback(turn.turnId, force);
  } catch (error) {
    io.err(`undo: ${describeError(error)}`);
    return undefined;
  }
  const blocks = result.undone.reduce((sum, file) => sum + file.blocks, 0);
  const what = result.mode === 'restore' ? 'the notes are as before the turn' : `${result.undone.length} file(s), ${blocks} block(s) put back`;
  if (result.conflicts.length === 0) {
    io.out(`undone (${result.mode}${force ? ', forced' : ''}): ${what}`);
    return result;
  }
  io.out(`partly undone (${result.mode}): ${what}; changed again since the turn, so left as they are:`);
  for (const conflict of result.conflicts) {
    io.out(conflict.path === '*' ? '  everything the turn wrote (its end was not recorded)' : `  ${conflict.path}${conflict.id ? ` block ${conflict.id}` : ''}`);
  }
  return result;
}
