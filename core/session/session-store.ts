import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { WORKSPACE } from '../core-tokens.js';
import { inject, injectable } from '../di.js';
import { ConflictError, KernelError, NotFoundError } from '../errors.js';
import type { Workspace } from '../workspace.js';
import { KeyedLock } from './keyed-lock.js';
import { checkKeptFields, checkSessionDepth } from './session-bounds.js';
import { JournaledDocuments } from './journaled-documents.js';
import { findAnchor, mergeRuntimeTurn } from './merge-turn.js';
import { RuntimeFiles } from './runtime-files.js';
import { SessionPaths, readJsonObject, sessionKind, writeJson } from './session-files.js';
import { SessionIndex, type IndexEntry } from './session-index.js';
import { TRANSIENT_FIELDS, type ActiveTurn, type RuntimeFile, type SessionDocument, type SessionEntry, type TodoItem, type TurnState } from './session-types.js';

export interface SaveResult {
  revision: number;
  session: SessionDocument;
}

export interface BeginTurn {
  turnID: string;
  mode?: 'append' | 'regenerate';
  userEntryID?: string;
  userContent?: string;
  /** The session revision the turn starts from; -1 to skip the check. */
  baseRevision: number;
}

function conflict(message: string, revision: number, reason: string): ConflictError {
  return new ConflictError('CONFLICT', message, { details: { revision, reason } });
}

/** Searched from the end: the entry a turn answers is nearly always the last user entry. */
function hasUserEntry(entries: readonly SessionEntry[], userEntryID: string): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type === 'user' && (userEntryID === '' || entry.id === userEntryID)) return true;
  }
  return false;
}

function isCommitted(session: SessionDocument | undefined, turn: ActiveTurn | undefined): boolean {
  return turn !== undefined && session?.lastCommittedTurnID === turn.turnID;
}

/**
 * The agent's sessions as files (REFERENCE.md §4): `session.json` is the revisioned history, and
 * `runtime.json` the turn being produced, each with a journal of the saves since it was written whole
 * (journaled-documents.ts). All changes to one session run one at a time; the workspace
 * lock keeps other processes out.
 */
@injectable()
export class FileSessionStore {
  private readonly paths: SessionPaths;
  /** session.json and its journal, held in memory while no one else changes them. */
  private readonly history: JournaledDocuments<SessionDocument>;
  /** runtime.json and its journal, held in memory like the history. */
  private readonly runtimes: RuntimeFiles;
  private readonly lock = new KeyedLock();
  private readonly index: SessionIndex;
  /** Sessions with a turn being streamed now; a `running` turn of any other session is an orphan. */
  private readonly live = new Set<string>();

  constructor(@inject(WORKSPACE) workspace: Workspace) {
    this.paths = new SessionPaths(join(workspace.agentDir, 'sessions'));
    this.history = new JournaledDocuments(sessionKind(this.paths));
    this.runtimes = new RuntimeFiles(this.paths);
    this.index = new SessionIndex(this.paths, this.lock, (id) => this.history.peek(id));
  }

  /**
   * When a session's journals are folded into session.json and runtime.json: past `minBytes` (1 MiB) and
   * `shareOfSession` times the size of the whole file (1). For tests and tools that want folds to happen often.
   */
  setJournalLimits(limits: { minBytes?: number; shareOfSession?: number }): void {
    for (const documents of [this.history, this.runtimes.documents]) {
      if (limits.minBytes !== undefined) documents.limits.minBytes = limits.minBytes;
      if (limits.shareOfSession !== undefined) documents.limits.shareOfSession = limits.shareOfSession;
    }
  }

  /** Folds every journal into its whole file (the kernel does this when it closes). */
  async close(): Promise<void> {
    for (const documents of [this.history, this.runtimes.documents] as const) {
      for (const id of documents.unfoldedIds()) {
        await this.lock.run(id, () => documents.fold(id)).catch(() => undefined);
      }
    }
  }

  setStreaming(id: string, streaming: boolean): void {
    if (streaming) this.live.add(id);
    else this.live.delete(id);
  }

  /** Saves a session following the save algorithm of REFERENCE.md §4. */
  async save(body: unknown): Promise<SaveResult> {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { id?: unknown }).id !== 'string') {
      throw new KernelError('INVALID_INPUT', 'invalid session data: an object with an id is needed', { details: { field: 'id' } });
    }
    const input = body as Record<string, unknown>;
    const id = input.id as string;
    this.paths.folder(id);
    checkSessionDepth(input);
    return this.lock.run(id, () => this.saveLocked(id, input));
  }

  private async saveLocked(id: string, input: Record<string, unknown>): Promise<SaveResult> {
    const expected = typeof input.expectedRevision === 'number' ? input.expectedRevision : undefined;
    const commitTurnID = typeof input.commitTurnID === 'string' && input.commitTurnID !== '' ? input.commitTurnID
      : typeof input.recoveryTurnID === 'string' && input.recoveryTurnID !== '' ? input.recoveryTurnID : undefined;
    const stored = await this.history.current(id);
    // A retried commit answers with what the first one stored, whatever this request carries.
    if (commitTurnID !== undefined && stored?.lastCommittedTurnID === commitTurnID) {
      await this.clearTurn(id, commitTurnID);
      return { revision: stored.revision, session: stored };
    }
    const storedRevision = stored?.revision ?? 0;
    if (expected !== undefined && expected !== storedRevision) throw conflict(`session ${id} is at revision ${storedRevision}, not ${expected}`, storedRevision, 'stale_revision');
    const next: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) if (!TRANSIENT_FIELDS.has(key) && key !== 'lastCommittedTurnID') next[key] = value;
    for (const [key, value] of Object.entries(stored ?? {})) if (!(key in next) && !TRANSIENT_FIELDS.has(key)) next[key] = value;
    checkKeptFields(next, stored);
    // A new session: a runtime in its folder was left by a removal a crash cut short (a runtime is only
    // written beside a session.json); its turn, anchored in the old history, would block this one.
    if (!stored) await this.runtimes.remove(id);
    const runtime = await this.finalizeIfOrphaned(id, await this.runtimes.read(id));
    const turn = runtime?.activeTurn;
    if (commitTurnID !== undefined) {
      if (!turn || turn.turnID !== commitTurnID) throw conflict(`turn ${commitTurnID} is not the turn of session ${id}`, storedRevision, 'unknown_turn');
      if (turn.state === 'running') throw conflict(`turn ${commitTurnID} is still running; it can be committed once it has finished`, storedRevision, 'runtime_not_finalized');
      next.entries = mergeRuntimeTurn(Array.isArray(next.entries) ? next.entries as SessionDocument['entries'] : [], turn);
      // Totals over all turns: each turn's counters start at zero.
      next.promptTokens = (stored?.promptTokens ?? 0) + turn.promptTokens;
      next.completionTokens = (stored?.completionTokens ?? 0) + turn.completionTokens;
    } else if (turn && !isCommitted(stored, turn)) {
      throw conflict(`session ${id} has an uncommitted turn (${turn.turnID}); commit it first`, storedRevision, 'uncommitted_turn');
    }
    const now = new Date().toISOString();
    const document = { ...next, id, entries: Array.isArray(next.entries) ? next.entries : [], revision: storedRevision + 1, createdAt: next.createdAt ?? now, updatedAt: now } as SessionDocument;
    if (commitTurnID !== undefined) document.lastCommittedTurnID = commitTurnID;
    const saved = await this.history.write(id, document);
    if (commitTurnID !== undefined) await this.clearTurn(id, commitTurnID);
    // The save has landed: the index (which holds nothing the session folders do not) failing to follow
    // must not answer it failed (a retried save then met a conflict, a turn's message was added twice).
    await this.index.update(saved).catch(() => undefined);
    return { revision: saved.revision, session: saved };
  }

  /** session.json as stored, without the runtime overlay. */
  async readStored(id: string): Promise<SessionDocument> {
    this.paths.folder(id);
    return this.lock.run(id, () => this.existing(id));
  }

  /** The session as a client sees it: the stored history with an uncommitted turn folded in. */
  async read(id: string): Promise<SessionDocument> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      const stored = await this.history.current(id);
      if (!stored) throw new NotFoundError('NOT_FOUND', `No session with id '${id}'`, { details: { id } });
      const runtime = await this.finalizeIfOrphaned(id, await this.runtimes.read(id));
      const turn = runtime?.activeTurn;
      const view: SessionDocument = { ...stored, permissionMode: runtime?.permissionMode ?? 'confirm' };
      if (turn && !isCommitted(stored, turn)) {
        view.entries = mergeRuntimeTurn(stored.entries, turn);
        // The entries before this one are the stored history's: a client following the turn reads from here.
        view.recoveryFrom = findAnchor(stored.entries, turn.userEntryID);
        view.recoveryTurnID = turn.turnID;
        view.recoveryState = turn.state;
        view.recoveryRevision = runtime.revision;
      }
      return view;
    });
  }

  /**
   * Commits a turn that ended but never was (its commit failed, or the kernel stopped): what starts a
   * turn or undoes one does this first, as a save is refused while a turn is uncommitted. Returns the
   * session as `read` shows it then.
   */
  async commitEndedTurn(id: string): Promise<SessionDocument> {
    const session = await this.read(id);
    if (typeof session.recoveryTurnID !== 'string' || session.recoveryState === 'running') return session;
    await this.save({ id, entries: (await this.readStored(id)).entries, commitTurnID: session.recoveryTurnID });
    return this.read(id);
  }

  async beginTurn(id: string, begin: BeginTurn): Promise<ActiveTurn> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      const stored = await this.existing(id);
      const runtime = await this.finalizeIfOrphaned(id, await this.runtimes.read(id)) ?? this.emptyRuntime(id);
      const current = runtime.activeTurn;
      if (current && current.turnID !== begin.turnID && !isCommitted(stored, current)) {
        throw conflict(`session ${id} has an uncommitted turn (${current.turnID})`, stored.revision, 'uncommitted_turn');
      }
      if (begin.baseRevision >= 0 && begin.baseRevision !== stored.revision) {
        throw conflict(`session ${id} is at revision ${stored.revision}, not ${begin.baseRevision}`, stored.revision, 'stale_revision');
      }
      const userEntryID = begin.userEntryID ?? '';
      if (!hasUserEntry(stored.entries, userEntryID)) {
        throw new KernelError('INVALID_INPUT', 'agent runtime user entry not found', { details: { userEntryID } });
      }
      const turn: ActiveTurn = {
        turnID: begin.turnID, mode: begin.mode ?? 'append', userEntryID, baseRevision: begin.baseRevision, state: 'running',
        delta: [], draftContent: '', snapshotIDs: [], promptTokens: 0, completionTokens: 0, updatedAt: new Date().toISOString(),
        ...(begin.userContent !== undefined ? { userContent: begin.userContent } : {}),
      };
      await this.writeRuntime(id, { ...runtime, activeTurn: turn });
      return turn;
    });
  }

  /** Saves the turn's progress; a turn already committed is left alone (a late checkpoint). */
  async saveTurn(id: string, turn: ActiveTurn): Promise<void> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      const runtime = await this.runtimes.read(id);
      if (runtime?.activeTurn?.turnID !== turn.turnID) {
        // A checkpoint that arrives after its turn was committed changes nothing; any other is a conflict.
        const stored = await this.existing(id);
        if (stored.lastCommittedTurnID === turn.turnID) return;
        throw conflict(`turn ${turn.turnID} is not the active turn of session ${id}`, stored.revision, 'unknown_turn');
      }
      await this.writeRuntime(id, { ...runtime, activeTurn: { ...turn, updatedAt: new Date().toISOString() } });
    });
  }

  async finalizeTurn(id: string, turnID: string, state: Exclude<TurnState, 'running'>): Promise<void> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      const runtime = await this.runtimes.read(id);
      const turn = runtime?.activeTurn;
      if (!runtime || !turn || turn.turnID !== turnID) return;
      await this.writeRuntime(id, { ...runtime, activeTurn: { ...turn, state, updatedAt: new Date().toISOString() } });
    });
  }

  /**
   * The session's compaction (runtime.json), kept across turns; opaque here; the turn loop checks
   * that it still matches the history before using it.
   */
  async readCompaction(id: string): Promise<unknown> {
    this.paths.folder(id);
    return this.lock.run(id, async () => (await this.runtimes.read(id))?.compaction);
  }

  async saveCompaction(id: string, compaction: unknown): Promise<void> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      await this.existing(id);
      const runtime = await this.runtimes.read(id) ?? this.emptyRuntime(id);
      await this.writeRuntime(id, { ...runtime, compaction });
    });
  }

  /** The session's mode as it is now (a person may change it while a turn runs). */
  async permissionMode(id: string): Promise<RuntimeFile['permissionMode']> {
    this.paths.folder(id);
    return this.lock.run(id, async () => (await this.runtimes.read(id))?.permissionMode ?? 'confirm');
  }

  async setPermissionMode(id: string, mode: RuntimeFile['permissionMode']): Promise<void> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      await this.existing(id);
      const runtime = await this.runtimes.read(id) ?? this.emptyRuntime(id);
      await this.writeRuntime(id, { ...runtime, permissionMode: mode });
    });
  }

  /** The session's task list (`todos.json`); empty when none was written. */
  async readTodos(id: string): Promise<TodoItem[]> {
    this.paths.folder(id);
    const value = await readJsonObject(this.paths.todos(id), `the task list of session ${id}`);
    return Array.isArray(value?.todos) ? value.todos as TodoItem[] : [];
  }

  /** Replaces the session's task list; the session must exist. */
  async writeTodos(id: string, todos: readonly TodoItem[]): Promise<void> {
    this.paths.folder(id);
    await this.lock.run(id, async () => {
      await this.existing(id);
      await writeJson(this.paths.todos(id), { todos, updatedAt: new Date().toISOString() });
    });
  }

  /** Removes a session; refused while a turn of it is being streamed. */
  async delete(id: string): Promise<void> {
    this.paths.folder(id);
    return this.lock.run(id, async () => {
      if (this.live.has(id)) throw conflict(`session ${id} is running a turn`, 0, 'running');
      await rm(this.paths.folder(id), { recursive: true, force: true });
      this.history.forget(id, true);
      this.runtimes.documents.forget(id, true);
      await this.index.remove(id);
    });
  }

  /** Sessions newest first, `pageSize` at a time, optionally those whose title holds `title`. */
  async list(options: { page?: number; pageSize?: number; title?: string } = {}): Promise<{ total: number; sessions: IndexEntry[] }> {
    return this.index.list(options);
  }

  private async existing(id: string): Promise<SessionDocument> {
    const stored = await this.history.current(id);
    if (!stored) throw new NotFoundError('NOT_FOUND', `No session with id '${id}'`, { details: { id } });
    return stored;
  }

  /** A `running` turn with no stream behind it was cut off (a crash, a restart): it is interrupted now. Returns the runtime as it is then. */
  private async finalizeIfOrphaned(id: string, runtime: RuntimeFile | undefined): Promise<RuntimeFile | undefined> {
    const turn = runtime?.activeTurn;
    if (!runtime || !turn || turn.state !== 'running' || this.live.has(id)) return runtime;
    return this.writeRuntime(id, { ...runtime, activeTurn: { ...turn, state: 'interrupted', updatedAt: new Date().toISOString() } });
  }

  private async clearTurn(id: string, turnID: string): Promise<void> {
    const runtime = await this.runtimes.read(id);
    if (runtime?.activeTurn?.turnID !== turnID) return;
    const { activeTurn: _done, ...rest } = runtime;
    await this.writeRuntime(id, rest as RuntimeFile);
  }

  /** Runtime writes need the session file: a late checkpoint must not revive a deleted session. Returns what was stored. */
  private async writeRuntime(id: string, runtime: RuntimeFile): Promise<RuntimeFile> {
    // Its existence is enough (a stat): parsing a long history on every checkpoint would cost more than the write.
    if (!(await stat(this.paths.session(id)).then(() => true, () => false))) throw new NotFoundError('NOT_FOUND', `No session with id '${id}'`, { details: { id } });
    return this.runtimes.write(id, runtime);
  }

  private emptyRuntime(id: string): RuntimeFile {
    return { schemaVersion: 1, revision: 0, sessionID: id, permissionMode: 'confirm' };
  }
}
