import { KernelError, isKernelError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Kernel } from '../../kernel.js';
import type { PermissionMode } from '../../session/session-types.js';
import type { TurnEvent } from '../../turn/turn-events.js';
import { undoTurn } from '../../turn/undo-turn.js';
import { callAction } from '../one-shot-kernel.js';
import type { ChatBackend, SnapshotSummary } from './chat-backend.js';

/** The person at the terminal, as the kernel records who answered or undid something. */
const BY = 'person:cli';

/** The chat on a kernel this process opened (nobody serves the workspace). */
export class LocalChatBackend implements ChatBackend {
  readonly where = 'this process opened the workspace';

  private constructor(private readonly kernel: Kernel, readonly sessionId: string) {}

  /** Goes on with `sessionId`, or starts a new session. */
  static async open(kernel: Kernel, sessionId: string | undefined): Promise<LocalChatBackend> {
    const id = sessionId !== undefined
      ? (await kernel.sessions.read(sessionId)).id
      : (await kernel.sessions.save({ id: newId(), entries: [], title: 'Terminal chat', expectedRevision: 0 })).session.id;
    return new LocalChatBackend(kernel, id);
  }

  /**
   * The turn's events are queued as the loop emits them and shown one at a time, so that a
   * confirmation's prompt holds the ones after it. Whatever happens while showing them, the turn is
   * ended before this returns: never left running against a kernel about to close.
   */
  async runTurn(message: string, onEvent: (event: TurnEvent) => Promise<void>): Promise<void> {
    const { kernel, sessionId } = this;
    // Taken before the model check: Ctrl-C during it reaches the turn.
    const prepared = await kernel.turns.prepare(sessionId);
    const queue: TurnEvent[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    const turn = prepared.run(message, (event) => { queue.push(event); wake?.(); })
      .catch((error: unknown) => { failure = error; })
      .finally(() => { finished = true; wake?.(); });
    try {
      while (!finished || queue.length > 0) {
        const event = queue.shift();
        if (event) await onEvent(event);
        else await new Promise<void>((resolve) => { wake = resolve; });
        wake = undefined;
      }
    } finally {
      if (!finished) kernel.turns.cancel(sessionId);
      await turn;
    }
    if (failure !== undefined) throw failure;
  }

  async cancelTurn(): Promise<boolean> {
    return this.kernel.turns.cancel(this.sessionId);
  }

  async answerConfirmation(confirmation: Parameters<ChatBackend['answerConfirmation']>[0], answer: { approved: boolean; always: boolean }): Promise<void> {
    await this.kernel.confirmations.answer(confirmation.id, { approved: answer.approved, argsHash: confirmation.argsHash, answeredBy: BY, ...(answer.always ? { always: true } : {}) });
  }

  async answerQuestion(questionId: string, answers: string[][]): Promise<void> {
    this.kernel.turns.questions.answer(this.sessionId, questionId, answers);
  }

  async setMode(mode: PermissionMode): Promise<void> {
    // The same rule, and words, as PUT …/mode.
    if (mode === 'auto' && !this.kernel.config.gate.allowAutoMode) {
      throw new KernelError('FORBIDDEN', "the administrator does not allow the session mode 'auto' (gate.allowAutoMode in quire.json)");
    }
    await this.kernel.sessions.setPermissionMode(this.sessionId, mode);
  }

  rollback(turnId: string, force: boolean): ReturnType<ChatBackend['rollback']> {
    return undoTurn(this.kernel, this.sessionId, turnId, force, BY);
  }

  session(): ReturnType<ChatBackend['session']> {
    return this.kernel.sessions.read(this.sessionId);
  }

  async snapshots(): Promise<SnapshotSummary[]> {
    try {
      return (await callAction(this.kernel, 'snapshot_list', { origin: `agent:${this.sessionId}/`, limit: 1000 })).snapshots as SnapshotSummary[];
    } catch (error) {
      if (isKernelError(error) && error.code === 'ACTION_NOT_FOUND') return [];
      throw error;
    }
  }

  async pending(): ReturnType<ChatBackend['pending']> {
    return {
      confirmations: this.kernel.confirmations.list({ status: 'pending', sessionId: this.sessionId }),
      questions: this.kernel.turns.questions.list(this.sessionId),
    };
  }
}
