import { isKernelError } from '../../errors.js';
import type { Confirmation } from '../../gate/confirmation.js';
import type { PermissionMode, SessionDocument } from '../../session/session-types.js';
import type { TurnRollbackOutcome } from '../../turn/snapshot-service.js';
import type { TurnEvent } from '../../turn/turn-events.js';
import type { ChatBackend, SnapshotSummary } from './chat-backend.js';
import type { KernelClient } from './kernel-client.js';

/** A kernel serving the workspace: a client of it, and its boot (serve.json's instance). */
export interface ServingKernel {
  client: KernelClient;
  instance: string;
}

/**
 * The chat on a kernel that serves the workspace (`quire serve`), through the documented session
 * routes of its HTTP API, as the administrator whose token the workspace keeps.
 */
export class HttpChatBackend implements ChatBackend {
  readonly where: string;

  /** `findKernel`: the kernel serving the workspace now (serve.json checked) and its boot, or none. */
  private constructor(private client: KernelClient, private instance: string, readonly sessionId: string, private readonly findKernel: () => Promise<ServingKernel | undefined>) {
    this.where = `on the kernel at ${client.url}`;
  }

  /** Goes on with `sessionId`, or starts a new session. */
  static async open(serving: ServingKernel, sessionId: string | undefined, findKernel: () => Promise<ServingKernel | undefined>): Promise<HttpChatBackend> {
    const { client } = serving;
    const id = sessionId !== undefined
      ? (await client.json<{ session: SessionDocument }>('GET', `/api/agent/sessions/${encodeURIComponent(sessionId)}`)).session.id
      : (await client.json<{ session: SessionDocument }>('POST', '/api/agent/sessions', { title: 'Terminal chat' })).session.id;
    return new HttpChatBackend(client, serving.instance, id, findKernel);
  }

  /**
   * After a request that could not reach the kernel: a chat beside a `quire serve` that stopped went on
   * prompting, each message failing "does not answer". A kernel serving the workspace again (restarted,
   * perhaps at another port) is taken up; none, and the chat ends saying how to go on with the session.
   */
  async stillConnected(): Promise<{ ok: true; restarted?: { url: string; cutOff: boolean } } | { ok: false; reason: string }> {
    const lost = this.client.lostContact;
    if (!lost) return { ok: true };
    const now = await this.findKernel().catch(() => undefined);
    if (!now) return { ok: false, reason: `the kernel at ${this.client.url} has stopped` };
    if (now.instance === this.instance) {
      this.client = now.client;
      return { ok: true };
    }
    // Another boot: the session must be there (a session deleted meanwhile answered 404 to every message, for good).
    const there = await now.client.json('GET', this.path()).then(() => true, (error: unknown) => !(isKernelError(error) && error.code === 'NOT_FOUND'));
    if (!there) return { ok: false, reason: `the kernel started again at ${now.client.url} has no session ${this.sessionId}` };
    this.client = now.client;
    this.instance = now.instance;
    return { ok: true, restarted: { url: now.client.url, cutOff: lost === 'during' } };
  }

  private ownTurnRunning = false;
  /** The id of the turn this chat started, once the server named it. */
  private ownTurn: string | undefined;

  private path(rest = ''): string {
    return `/api/agent/sessions/${encodeURIComponent(this.sessionId)}${rest}`;
  }

  /**
   * The server runs the turn on if its client leaves (cancel is explicit there), so a stream that ends
   * without the turn's `done` (the connection lost, the screen failing) cancels it before returning.
   */
  async runTurn(message: string, onEvent: (event: TurnEvent) => Promise<void>): Promise<void> {
    let ended = false;
    this.ownTurnRunning = true;
    this.ownTurn = undefined;
    try {
      await this.client.events(this.path('/turns'), { message }, async ({ data }) => {
        const event = data as TurnEvent;
        // Its own turn is the one the `turn` event names: a lone `error` (the turn never began) started none.
        if (event.type === 'turn') this.ownTurn = event.turnID;
        if (event.type === 'done') ended = true;
        await onEvent(event);
      });
    } finally {
      this.ownTurnRunning = false;
      if (this.ownTurn !== undefined && !ended) await this.cancelTurn().catch(() => false);
      this.ownTurn = undefined;
    }
  }

  /**
   * Whether a turn this chat started is running: a chat ended by a signal cancels only its own (the
   * session's running turn may be another client's, the web app's).
   */
  get runsOwnTurn(): boolean {
    return this.ownTurnRunning;
  }

  /** Cancels this chat's own turn when it knows its id (another client's turn in the session is left alone), else the session's. */
  async cancelTurn(): Promise<boolean> {
    const only = this.ownTurn !== undefined ? `?turn=${encodeURIComponent(this.ownTurn)}` : '';
    return (await this.client.json<{ cancelled: boolean }>('POST', this.path(`/turns/cancel${only}`))).cancelled;
  }

  async answerConfirmation(confirmation: Confirmation, answer: { approved: boolean; always: boolean }): Promise<void> {
    const body = { approved: answer.approved, argsHash: confirmation.argsHash, ...(answer.always ? { always: true } : {}) };
    await this.client.json('POST', this.path(`/confirmations/${encodeURIComponent(confirmation.id)}/answer`), body);
  }

  async answerQuestion(questionId: string, answers: string[][]): Promise<void> {
    await this.client.json('POST', this.path(`/questions/${encodeURIComponent(questionId)}/answer`), { answers });
  }

  async setMode(mode: PermissionMode): Promise<void> {
    await this.client.json('PUT', this.path('/mode'), { mode });
  }

  rollback(turnId: string, force: boolean): Promise<TurnRollbackOutcome> {
    return this.client.json('POST', this.path(`/turns/${encodeURIComponent(turnId)}/rollback`), { force });
  }

  async session(): Promise<SessionDocument> {
    return (await this.client.json<{ session: SessionDocument }>('GET', this.path())).session;
  }

  async snapshots(): Promise<SnapshotSummary[]> {
    try {
      return (await this.client.json<{ result: { snapshots: SnapshotSummary[] } }>('POST', '/api/actions/snapshots/snapshot/list', { origin: `agent:${this.sessionId}/`, limit: 1000 })).result.snapshots;
    } catch (error) {
      if (isKernelError(error) && (error.code === 'ACTION_NOT_FOUND' || error.code === 'NOT_FOUND')) return [];
      throw error;
    }
  }

  pending(): ReturnType<ChatBackend['pending']> {
    return this.client.json('GET', this.path('/pending'));
  }
}
