import type { Confirmation } from '../../gate/confirmation.js';
import type { PermissionMode, SessionDocument } from '../../session/session-types.js';
import type { PendingQuestion } from '../../turn/questions.js';
import type { TurnRollbackOutcome } from '../../turn/snapshot-service.js';
import type { TurnEvent } from '../../turn/turn-events.js';

/** A snapshot as `snapshot_list` shows it; the agent's carry `agent:<session>/<turn>` as origin. */
export interface SnapshotSummary {
  id: string;
  memo: string;
  created: string;
  origin: string;
}

/**
 * What `quire chat` needs of a kernel, one session's worth. Two transports implement it: the kernel
 * in this process (nobody serves the workspace) and a serving kernel over HTTP; the chat's screen and
 * commands are written once against this.
 */
export interface ChatBackend {
  /** Where the kernel runs, for the chat's first line. */
  readonly where: string;
  readonly sessionId: string;
  /**
   * Runs one turn, handing its events to `onEvent` in order, each awaited before the next (a
   * confirmation waits for its answer). Resolves once the turn has ended: never with it still running.
   * Throws what kept it from starting (a model that is not configured, a turn already running).
   */
  runTurn(message: string, onEvent: (event: TurnEvent) => Promise<void>): Promise<void>;
  /** Stops the running turn (its draft is kept); false when none runs. */
  cancelTurn(): Promise<boolean>;
  answerConfirmation(confirmation: Confirmation, answer: { approved: boolean; always: boolean }): Promise<void>;
  answerQuestion(questionId: string, answers: string[][]): Promise<void>;
  setMode(mode: PermissionMode): Promise<void>;
  /** The undo of `POST …/turns/{turnId}/rollback`, recorded in the session. */
  rollback(turnId: string, force: boolean): Promise<TurnRollbackOutcome>;
  /** The session as a client reads it (an unfinished turn folded in). */
  session(): Promise<SessionDocument>;
  /** The snapshots of this session's turns (the newest 1,000); empty when the snapshots plugin is not active. */
  snapshots(): Promise<SnapshotSummary[]>;
  /** What the session's turn waits for: confirmations and questions not answered yet. */
  pending(): Promise<{ confirmations: Confirmation[]; questions: PendingQuestion[] }>;
  /**
   * A kernel in another process may stop under the chat: after a request that did not reach it, whether
   * one serves the workspace (`restarted`: its address, when it is another boot, and whether a request was
   * cut off there rather than never sent), or why the chat cannot go on.
   */
  stillConnected?(): Promise<{ ok: true; restarted?: { url: string; cutOff: boolean } } | { ok: false; reason: string }>;
}
