import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { ConflictError, KernelError, NotFoundError, isKernelError } from '../../errors.js';
import type { TurnEvent } from '../../turn/turn-events.js';
import { undoTurn } from '../../turn/undo-turn.js';
import { newId } from '../../ids.js';
import type { Kernel } from '../../kernel.js';
import type { SessionDocument, SessionEntry } from '../../session/session-types.js';
import type { HttpEnv } from '../http-env.js';
import type { JsonSchema } from '../openapi/openapi-types.js';
import { bodyValidator, readJsonBody } from '../read-body.js';
import { EventQueue } from '../event-queue.js';

export const NEW_SESSION_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { title: { type: 'string', maxLength: 500 } },};
const parseNewSession = bodyValidator<{ title?: string }>(NEW_SESSION_BODY);

export const TURN_BODY: JsonSchema = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 200_000 },
    messageId: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,100}$', description: "the client's id for this message: sent again (a retry after the connection dropped), it is refused with 409 (reason duplicate) instead of run as a second turn" },
  },};
const parseTurn = bodyValidator<{ message: string; messageId?: string }>(TURN_BODY);
/** A turn's message bound, for the preview's query parameter too. */
const MAX_PREVIEW_MESSAGE = 200_000;

export const QUESTION_ANSWERS_BODY: JsonSchema = {
  type: 'object',
  required: ['answers'],
  additionalProperties: false,
  properties: { answers: { type: 'array', maxItems: 10, items: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 5000 } } } },};
const parseAnswers = bodyValidator<{ answers: string[][] }>(QUESTION_ANSWERS_BODY);

export const SESSION_CONFIRMATION_ANSWER_BODY: JsonSchema = {
  type: 'object',
  required: ['approved', 'argsHash'],
  additionalProperties: false,
  properties: { approved: { type: 'boolean' }, argsHash: { type: 'string', minLength: 1, maxLength: 200 }, always: { type: 'boolean' } },};
const parseConfirmationAnswer = bodyValidator<{ approved: boolean; argsHash: string; always?: boolean }>(SESSION_CONFIRMATION_ANSWER_BODY);

export const ROLLBACK_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { force: { type: 'boolean' } },};
const parseRollback = bodyValidator<{ force?: boolean }>(ROLLBACK_BODY);

export const MODE_BODY: JsonSchema = {
  type: 'object',
  required: ['mode'],
  additionalProperties: false,
  properties: { mode: { enum: ['confirm', 'auto'] } },};
const parseMode = bodyValidator<{ mode: 'confirm' | 'auto' }>(MODE_BODY);

/**
 * The fields of an entry the kernel reads, checked: an entry saved with `toolCalls` that is not a list
 * (or a call without an id) was stored, and then every later turn of the session failed and its preview
 * answered 500. Other fields a client keeps pass as they are (the session store bounds their size).
 */
const SAVED_TOOL_CALL: JsonSchema = {
  type: 'object', required: ['id', 'name'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 }, name: { type: 'string', minLength: 1, maxLength: 200 }, result: { type: 'string' }, state: { enum: ['pending', 'executing', 'finished', 'unknown', 'skipped'] } },
};
const SAVED_ENTRY: JsonSchema = {
  type: 'object', required: ['id', 'type'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 200 },
    type: { enum: ['user', 'thinking', 'assistant', 'confirm', 'question', 'snapshot', 'rollback'] },
    content: { type: 'string' },
    toolCalls: { type: 'array', maxItems: 1000, items: SAVED_TOOL_CALL },
    timestamp: { type: 'string', maxLength: 40 },
  },
};

export const SAVE_SESSION_BODY: JsonSchema = {
  type: 'object',
  properties: {
    // Left out, the stored entries are kept: a rename of a session past the body limit (a few long tool results) was 413.
    entries: { type: 'array', maxItems: 100_000, items: SAVED_ENTRY, description: 'The whole history; left out, the stored one is kept (a rename).' },
    expectedRevision: { type: 'integer', minimum: 0 },
    commitTurnID: { type: 'string', maxLength: 100 },
    // As a new session's (POST): the index of sessions holds every title, read and written at every save.
    title: { type: 'string', maxLength: 500 },
    createdAt: { type: 'string', maxLength: 40 },
  },};
const parseSession = bodyValidator<Record<string, unknown>>(SAVE_SESSION_BODY);

/** A whole number from 1 in a query parameter; `page=abc` or `page=0` is refused naming it (it was taken as 1). */
function positive(value: string | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  const parsed = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed > 0)) throw new KernelError('INVALID_INPUT', `${field} must be a whole number from 1, not '${value.slice(0, 40)}'`, { details: { field } });
  return parsed;
}

/** A whole number from 0 in a query parameter, or undefined when it is not given. */
function whole(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new KernelError('INVALID_INPUT', `${field} must be a whole number from 0, not '${value.slice(0, 40)}'`, { details: { field } });
  return Number(value);
}

/**
 * A session from `entriesFrom` on, for a client that holds it at `revision` (the web app following a
 * turn it did not start polled a whole session every 2 s: 44 MB for a long one). The answer starts no
 * later than the entries the client's copy shares with this one: the stored history's at the same
 * revision, before a turn's user entry; another revision, it starts at 0.
 */
function sessionFrom(session: SessionDocument, from: number | undefined, revision: number | undefined, tail: number | undefined): { session: SessionDocument; entriesFrom?: number; entryCount?: number } {
  if (from === undefined && revision === undefined && tail === undefined) return { session };
  if ((from === undefined) !== (revision === undefined)) {
    const field = from === undefined ? 'entriesFrom' : 'revision';
    throw new KernelError('INVALID_INPUT', `${field} is needed with ${field === 'revision' ? 'entriesFrom' : 'revision'}: the entries a client holds are those of one revision`, { details: { field } });
  }
  const shared = typeof session.recoveryFrom === 'number' ? session.recoveryFrom : session.entries.length;
  const start = from !== undefined && revision === session.revision ? Math.min(from, shared) : tailStart(session.entries, tail);
  return { session: { ...session, entries: session.entries.slice(start) }, entriesFrom: start, entryCount: session.entries.length };
}

/**
 * Where the last `tail` entries start, moved back to the person's message that began their turn (a
 * turn is never shown in part); 0 without a tail. Opening a long session read all of it (tens of MB)
 * to show its newest messages, and so did the page after each turn.
 */
function tailStart(entries: readonly SessionEntry[], tail: number | undefined): number {
  if (tail === undefined || tail >= entries.length) return 0;
  let start = entries.length - tail;
  while (start > 0 && entries[start]!.type !== 'user') start--;
  return start;
}

/**
 * The agent's sessions over HTTP (admin only): create, list, read (with the uncommitted turn folded
 * in), save (409 with the current revision on a conflict), delete (409 while a turn runs), mode.
 */
export function sessionRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const sessions = kernel.sessions;
  app.post('/', async (c) => {
    const body = parseNewSession(await readJsonBody(c));
    const saved = await sessions.save({ id: newId(), entries: [], ...(body.title !== undefined ? { title: body.title } : {}), expectedRevision: 0 });
    return c.json(saved, 201);
  });
  app.get('/', async (c) => {
    const title = c.req.query('title');
    return c.json(await sessions.list({ page: positive(c.req.query('page'), 1, 'page'), pageSize: positive(c.req.query('pageSize'), 30, 'pageSize'), ...(title ? { title } : {}) }));
  });
  app.get('/:id', async (c) => {
    const from = whole(c.req.query('entriesFrom'), 'entriesFrom');
    const revision = whole(c.req.query('revision'), 'revision');
    const tail = whole(c.req.query('tail'), 'tail');
    if (tail === 0) throw new KernelError('INVALID_INPUT', 'tail must be 1 or more (the entries to answer from the end)', { details: { field: 'tail' } });
    const id = c.req.param('id');
    const answer = sessionFrom(await sessions.read(id), from, revision, tail);
    // Part of the entries: the agent's task list as it stands, which may have been written before them.
    return c.json(answer.entriesFrom !== undefined && answer.entriesFrom > 0 ? { ...answer, todos: await sessions.readTodos(id) } : answer);
  });
  app.put('/:id', async (c) => {
    const body = parseSession(await readJsonBody(c));
    return c.json(await sessions.save({ ...body, id: c.req.param('id') }));
  });
  app.delete('/:id', async (c) => {
    kernel.turns.assertIdle(c.req.param('id'));
    await sessions.delete(c.req.param('id'));
    return c.body(null, 204);
  });
  // What the next request would send (system prompt, tools, messages, tokens, notebooks, what is withheld), without calling the model.
  app.get('/:id/preview', async (c) => {
    const message = c.req.query('message') ?? '';
    if (message.length > MAX_PREVIEW_MESSAGE) throw new KernelError('INVALID_INPUT', `message is longer than ${MAX_PREVIEW_MESSAGE} characters`, { details: { field: 'message' } });
    return c.json({ preview: await kernel.turns.preview(c.req.param('id'), message) });
  });
  app.post('/:id/turns', async (c) => {
    const id = c.req.param('id');
    const { message, messageId } = parseTurn(await readJsonBody(c));
    // An unknown session is 404 here, before the model is checked (up to 15 s).
    await sessions.read(id);
    // The turn is taken before the model check, so that a Stop from now on reaches it.
    const prepared = await kernel.turns.prepare(id);
    if (messageId !== undefined) {
      // Read with the session's turn held: no turn of this message can start or end meanwhile.
      const entries = (await sessions.read(id).catch((error: unknown) => { prepared.release(); throw error; })).entries;
      const at = entries.findLastIndex((entry) => entry.type === 'user');
      const sent = entries[at];
      if (sent?.messageId === messageId) {
        prepared.release();
        // Said as it is: a turn that failed (the model's error, a Stop) before any answer left none.
        const answered = entries.slice(at + 1).some((entry) => entry.type === 'assistant' && typeof entry.content === 'string' && entry.content !== '');
        throw new ConflictError('CONFLICT', `this message (${messageId}) was sent already and its turn has run: ${answered ? 'its answer is in the session' : 'it ended without an answer'}; send it with another id to ask again`, { details: { reason: 'duplicate', messageId, entryId: sent.id, answered } });
      }
    }
    return streamSSE(c, async (stream) => {
      // Events are written in order; the turn goes on if the client leaves (cancel is explicit).
      const events = new EventQueue((event) => stream.writeSSE({ event: event.type, data: JSON.stringify(event) }));
      const emit = (event: TurnEvent): void => events.push(event);
      await prepared.run(message, emit, messageId).catch((error: unknown) => emit({ type: 'error', turnID: '', code: isKernelError(error) ? error.code : 'INTERNAL', message: error instanceof Error ? error.message : String(error) }));
      await events.drained();
    });
  });
  app.post('/:id/turns/:turnId/rollback', async (c) => {
    const id = c.req.param('id');
    const turnId = c.req.param('turnId');
    const { force } = parseRollback(await readJsonBody(c));
    return c.json(await undoTurn(kernel, id, turnId, force === true, `person:${c.get('principal').name}`));
  });
  // `cancelled` as before; `running` says what the cancel stopped (the calls started and not answered).
  // Written as a parameter: a static segment where `/:id/turns/:turnId/rollback` has one keeps Hono on
  // its slower trie router for every route of the app.
  app.post('/:id/turns/:cancel', (c) => {
    if (c.req.param('cancel') !== 'cancel') return c.notFound();
    // `?turn=<turnID>` stops that turn only (a client cancelling its own, while another may have started one).
    const turn = c.req.query('turn');
    if (turn !== undefined && (turn.length === 0 || turn.length > 200)) throw new KernelError('INVALID_INPUT', "'turn' must be a turn id", { details: { field: 'turn' } });
    return c.json(kernel.turns.cancelTurn(c.req.param('id'), turn));
  });
  app.get('/:id/pending', async (c) => {
    const id = c.req.param('id');
    await sessions.read(id);
    return c.json({ confirmations: kernel.confirmations.list({ status: 'pending', sessionId: id }), questions: kernel.turns.questions.list(id) });
  });
  app.post('/:id/confirmations/:confirmationId/answer', async (c) => {
    const id = c.req.param('id');
    const confirmation = kernel.confirmations.get(c.req.param('confirmationId'));
    // Answered through its own session only: a client of one session cannot approve another's calls.
    if (!confirmation || confirmation.sessionId !== id) throw new NotFoundError('CONFIRMATION_NOT_FOUND', 'No such confirmation in this session');
    const body = parseConfirmationAnswer(await readJsonBody(c));
    const answered = await kernel.confirmations.answer(confirmation.id, { approved: body.approved, argsHash: body.argsHash, answeredBy: `person:${c.get('principal').name}`, ...(body.always ? { always: true } : {}) });
    return c.json({ confirmation: answered });
  });
  app.post('/:id/questions/:questionId/answer', async (c) => {
    const { answers } = parseAnswers(await readJsonBody(c));
    kernel.turns.questions.answer(c.req.param('id'), c.req.param('questionId'), answers);
    return c.json({ answered: true });
  });
  app.put('/:id/mode', async (c) => {
    const { mode } = parseMode(await readJsonBody(c));
    if (mode === 'auto' && !kernel.config.gate.allowAutoMode) {
      throw new KernelError('FORBIDDEN', "the administrator does not allow the session mode 'auto' (gate.allowAutoMode in quire.json)");
    }
    await sessions.setPermissionMode(c.req.param('id'), mode);
    return c.json({ mode });
  });
  return app;
}
