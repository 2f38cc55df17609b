import { createToken } from '../tokens.js';

/** What the gate knows of a call when it asks which notebook the call touches. */
export interface ScopedCall {
  plugin: string;
  tool: string;
  action: string;
  input: Readonly<Record<string, unknown>>;
}

/**
 * Tells the gate which notebook a call touches when its input names a block or document rather than a
 * notebook, so that notebook-scoped grants and deny rules cannot be side-stepped by naming a block.
 * Provided by the native plugin that owns notebooks.
 */
export interface NotebookScope {
  /** Every notebook the call's ids lie in (a move may touch two); empty when it names none. */
  notebooksOf(call: ScopedCall): string[];
  /**
   * Whether the call writes the notes it names out of the workspace (an export to a folder): there
   * nothing keeps a local-only notebook's notes local, so the agent's such call is asked every time.
   */
  leavesWorkspace?(call: ScopedCall): boolean;
  /**
   * The notebooks whose privacy setting limits the agent, by id: `read` (it may read, never write) or
   * `none` (nothing of it reaches the agent). Notebooks left out are open to it (reads and writes
   * through the gate). Set only by a person (`.notebook.json`'s `agent`).
   */
  agentLimits(): ReadonlyMap<string, AgentLimit>;
  /** Every notebook's privacy settings, spelled out, for people (GET /api/gate). */
  privacy(): NotebookPrivacy[];
  /**
   * Calls `listener` after notes changed (MCP resource subscriptions): the documents and blocks
   * written, the notebooks touched; `all` when it cannot say (a rebuild, a removal). Returns the unsubscribe.
   */
  onChanged?(listener: (change: NotesChange) => void): () => void;
}

export interface NotesChange {
  ids: ReadonlySet<string>;
  notebooks: ReadonlySet<string>;
  all: boolean;
  /** The index was rebuilt (anything may have moved); `all` alone may be a removal, which moves nothing in. */
  rebuilt?: boolean;
}

export interface NotebookPrivacy {
  id: string;
  name: string;
  agent: 'write' | AgentLimit;
  egress: 'allowed' | 'local-only';
}

export type AgentLimit = 'read' | 'none';

/** A capability only native plugins may provide: a user plugin could otherwise steer the gate. */
export const NOTEBOOK_SCOPE = createToken<NotebookScope>('gate.notebook-scope');
