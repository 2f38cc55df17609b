/**
 * The session files of REFERENCE.md §4. A session document is kept as a JSON object: the fields below
 * are the ones the kernel reads and writes, and any other field a client stores is kept as it is.
 */
export type ToolCallState = 'pending' | 'executing' | 'finished' | 'unknown' | 'skipped';

export interface ToolCallRecord {
  id: string;
  name: string;
  arguments?: unknown;
  result?: string;
  state?: ToolCallState;
  [key: string]: unknown;
}

export interface SessionEntry {
  id: string;
  type: 'user' | 'thinking' | 'assistant' | 'confirm' | 'question' | 'snapshot' | 'rollback';
  content?: string;
  toolCalls?: ToolCallRecord[];
  timestamp?: string;
  [key: string]: unknown;
}

export interface SessionDocument {
  id: string;
  title?: string;
  entries: SessionEntry[];
  revision: number;
  lastCommittedTurnID?: string;
  createdAt?: string;
  updatedAt?: string;
  promptTokens?: number;
  completionTokens?: number;
  [key: string]: unknown;
}

export type TurnState = 'running' | 'finished' | 'interrupted';

/** The live turn in runtime.json: what the loop has produced since the person's message. */
export interface ActiveTurn {
  turnID: string;
  mode: 'append' | 'regenerate';
  /** The user entry the turn answers; empty means the last user entry. */
  userEntryID: string;
  /** For a regenerate turn: the new content of that user entry. */
  userContent?: string;
  baseRevision: number;
  state: TurnState;
  /** Assistant messages after the user message, in order. */
  delta: SessionEntry[];
  draftContent: string;
  draftRoundID?: string;
  /** Whose notes the draft's model had been shown (the `notebooks` its entry gets, egress-filter.ts). */
  draftNotebooks?: readonly string[] | 'all';
  snapshotIDs: string[];
  promptTokens: number;
  completionTokens: number;
  updatedAt: string;
  [key: string]: unknown;
}

export type PermissionMode = 'confirm' | 'auto';

export interface RuntimeFile {
  schemaVersion: 1;
  revision: number;
  sessionID: string;
  permissionMode: PermissionMode;
  activeTurn?: ActiveTurn;
  /** The session's compaction summary, kept across turns (its shape is the turn loop's: core/turn/compaction.ts). */
  compaction?: unknown;
  [key: string]: unknown;
}

/** One item of a session's task list (todos.json). */
export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed' | 'cancelled';
}

/** Never written to session.json: they describe one request, or are computed when reading. */
export const TRANSIENT_FIELDS: ReadonlySet<string> = new Set([
  'expectedRevision', 'commitTurnID', 'recoveryTurnID', 'recoveryState', 'recoveryRevision', 'recoveryFrom', 'agentRunning', 'pluginWorkflow', 'messages',
  // Shown when reading (from runtime.json); the runtime file is where it lives.
  'permissionMode',
]);

/** What a tool call left unfinished by an interrupted turn tells the model, by how far it got. */
export const NOT_EXECUTED = 'Tool was not executed because the turn was interrupted.';
export const RESULT_UNKNOWN = 'Tool execution was interrupted; the result is unknown. Do not retry automatically.';
