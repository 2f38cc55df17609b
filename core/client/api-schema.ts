/**
 * Generated from the kernel's OpenAPI document (GET /api/openapi.json) by `npm run generate:client`.
 * Do not edit: test/core/http/openapi.test.ts regenerates it and fails when it is out of step.
 */
/* eslint-disable */

export type Effect = "localWrite" | "dataEgress" | "externalCost";

export type ErrorBody = {
  error: {
    code: string;
    message: string;
    details: {
      [key: string]: unknown;
    };
  };
};

export type ProgressUpdate = {
  done?: number;
  total?: number;
  message?: string;
};

export type Job = {
  id: string;
  action: string;
  plugin: string;
  tool: string;
  name: string;
  startedBy: string;
  sessionId?: string;
  turnId?: string;
  state: "running" | "succeeded" | "failed" | "cancelled" | "timed_out" | "interrupted";
  created: string;
  updated: string;
  ended?: string;
  progress: ProgressUpdate;
  stopped?: string;
  result?: unknown;
  error?: {
    code: string;
    message: string;
    details?: {
      [key: string]: unknown;
    };
  };
};

export type Confirmation = {
  id: string;
  kind?: "release" | "budget";
  note?: string;
  plugin: string;
  tool: string;
  action: string;
  wireName: string;
  arguments?: unknown;
  argsHash: string;
  effects: Effect[];
  destructive: boolean;
  principal: string;
  sessionId?: string;
  turnId?: string;
  notebook?: string;
  createdAt: string;
  status: "pending" | "approved" | "rejected" | "consumed" | "expired";
  answeredAt?: string;
  answeredBy?: string;
};

export type Grant = {
  id: string;
  plugin: string;
  tool: string;
  action: string;
  effects: Effect[];
  notebook?: string;
  expiresAt?: string;
  createdAt: string;
  createdBy: string;
  fromConfirmation?: string;
};

export type SessionEntry = {
  id: string;
  type: "user" | "thinking" | "assistant" | "confirm" | "question" | "snapshot" | "rollback";
  content?: string;
  timestamp?: string;
  toolCalls?: Array<{
    id: string;
    name: string;
    arguments?: unknown;
    result?: string;
    state?: string;
  }>;
};

export type Session = {
  id: string;
  title?: string;
  entries: SessionEntry[];
  revision: number;
  lastCommittedTurnID?: string;
  createdAt?: string;
  updatedAt?: string;
  promptTokens?: number;
  completionTokens?: number;
};

export type SessionSummary = {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
};

export type SavedSession = {
  revision: number;
  session: Session;
};

export type Question = {
  id: string;
  sessionId: string;
  turnID?: string;
  questions?: unknown[];
};

export type Action = {
  name: string;
  wireName: string;
  description?: string;
  effects: Effect[];
  declaredEffects: Effect[];
  destructive: boolean;
  idempotent: boolean;
  agentOnly: boolean;
  personOnly: boolean;
  input: {
    [key: string]: unknown;
  };
  unavailable?: string;
};

export type Plugin = {
  id: string;
  source: string;
  enabled: boolean;
  active: boolean;
  trusted: boolean;
  file?: string;
  version?: string;
  description?: string;
  state: "active" | "inactive" | "disabled" | "refused" | "invalid" | "connected" | "connecting" | "failed";
  requires?: unknown[];
  provides?: unknown[];
  problems?: unknown[];
  issues?: unknown[];
  tools?: Array<{
    name: string;
    title?: string;
    description?: string;
    actions: Action[];
  }>;
};

export type Backend = {
  kind: string;
  name: string;
  plugin?: string;
  effects?: Effect[];
  selected?: boolean;
};

export type NotebookPrivacy = {
  id: string;
  name: string;
  agent: "write" | "read" | "none";
  egress: "allowed" | "local-only";
};

export type UsageRow = {
  key: string;
  requests: number;
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
  unpricedTokens: number;
  /** USD; null where a price is unknown */
  cost: number | null;
};

export type McpServer = {
  name: string;
  id?: string;
  state: string;
  endpoint?: unknown;
  tools?: unknown[];
  pending?: unknown[];
  error?: unknown;
};

export type AttrGetInput = {
  /** block id */
  id: string;
};

export type AttrSetInput = {
  /** block id */
  id: string;
  attrs: {
    [key: string]: string | null | undefined;
  };
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type BlockAppendInput = {
  /** block or document id */
  parentId: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
};

export type BlockBatchGetInput = {
  ids: string[];
};

export type BlockDeleteInput = {
  /** block id */
  id: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type BlockGetInput = {
  /** block id */
  id: string;
};

export type BlockGetChildrenInput = {
  /** block or document id */
  id: string;
};

export type BlockInsertInput = {
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  /** insert as last children of this block */
  parentId?: string;
  /** insert after this block */
  previousId?: string;
  /** insert before this block */
  nextId?: string;
};

export type BlockMoveInput = {
  /** block id */
  id: string;
  /** new parent */
  parentId?: string;
  /** new previous sibling */
  previousId?: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type BlockPrependInput = {
  /** block or document id */
  parentId: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
};

export type BlockUpdateInput = {
  /** block id */
  id: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type DailynoteAppendInput = {
  /** notebook id */
  notebook: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  date?: string;
};

export type DailynoteGetInput = {
  /** notebook id */
  notebook: string;
  date?: string;
};

export type DailynotePrependInput = {
  /** notebook id */
  notebook: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  date?: string;
};

export type DocumentCreateInput = {
  /** notebook id */
  notebook: string;
  title: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown?: string;
  /** parent document id */
  parentId?: string;
};

export type DocumentCreateOutput = {
  id: string;
  notebook: string;
  parentId?: string | null;
  hpath: string;
  blockCount?: number;
};

export type DocumentDuplicateInput = {
  /** document id */
  id: string;
};

export type DocumentGetInput = {
  /** document id */
  id: string;
};

export type DocumentGetMarkdownInput = {
  /** document id */
  id: string;
};

export type DocumentGetMarkdownOutput = {
  id: string;
  title: string;
  hpath: string;
  markdown: string;
};

export type DocumentInfoInput = {
  /** document id */
  id: string;
};

export type DocumentInfoOutput = {
  id: string;
  title: string;
  notebook: string;
  parentId?: string | null;
  path?: string;
  hpath: string;
  created?: string;
  updated?: string;
  updatedBy?: string;
  blockCount: number;
  attrs?: {
    [key: string]: string | undefined;
  };
  outline?: Array<{
    id: string;
    type: string;
    subtype?: string | null;
    preview?: string;
    childCount?: number;
  }>;
};

export type DocumentListInput = {
  /** notebook id */
  notebook: string;
  /** parent document id */
  parentId?: string;
};

export type DocumentListOutput = {
  notebook?: string;
  parentId?: string | null;
  documents: Array<{
    id: string;
    title: string;
    hpath: string;
    childDocuments: number;
    updated?: string;
  }>;
};

export type DocumentMoveInput = {
  /** document id */
  id: string;
  /** target notebook id */
  notebook: string;
  /** target parent document id; omit for the top of the notebook */
  parentId?: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type DocumentRemoveInput = {
  /** document id */
  id: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type DocumentRenameInput = {
  /** document id */
  id: string;
  title: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type EmbeddingsIndexInput = {
  reindex?: boolean;
  retryFailed?: boolean;
};

export type EmbeddingsReindexInput = Record<string, never>;

export type EmbeddingsRetryFailedInput = Record<string, never>;

export type EmbeddingsStatusInput = Record<string, never>;

export type ExportMarkdownInput = {
  /** notebook or document id */
  id: string;
  /** absolute path of the folder to write into */
  folder: string;
  /** replace files that already exist */
  overwrite?: boolean;
  /** obsidian: a vault Obsidian opens as it is */
  flavor?: "markdown" | "obsidian";
};

export type HistoryClearInput = {
  id?: string;
};

export type HistoryGetInput = {
  id: string;
  version: string;
};

export type HistoryListInput = {
  id: string;
};

export type HistoryRollbackInput = {
  id: string;
  version: string;
};

export type HistorySearchInput = {
  query?: string;
  notebook?: string;
  op?: "update" | "move" | "remove" | "rollback";
  from?: string;
  to?: string;
  limit?: number;
};

export type ImportMarkdownInput = {
  /** notebook id */
  notebook: string;
  /** absolute path of a .md or .sy file or a folder */
  path: string;
  /** import under this document */
  parentId?: string;
  /** auto: obsidian for a folder holding .obsidian/, siyuan for a .sy file or a folder of them (a SiYuan export), else markdown */
  flavor?: "auto" | "markdown" | "obsidian" | "siyuan";
};

export type IndexProblemsInput = Record<string, never>;

export type IndexRebuildInput = Record<string, never>;

export type NotebookCreateInput = {
  name: string;
  icon?: string;
  /** private (default): administrators and the agent only; published: readers too */
  access?: "private" | "published";
};

export type NotebookCreateOutput = {
  id: string;
  name: string;
  icon?: string;
  sort?: number;
  access?: "private" | "published";
  agent: "write" | "read" | "none";
  egress: "allowed" | "local-only";
  documents?: number;
};

export type NotebookListInput = Record<string, never>;

export type NotebookListOutput = {
  notebooks: Array<{
    id: string;
    name: string;
    icon?: string;
    sort?: number;
    access?: "private" | "published";
    agent: "write" | "read" | "none";
    egress: "allowed" | "local-only";
    documents?: number;
  }>;
};

export type NotebookRemoveInput = {
  /** notebook id */
  id: string;
};

export type NotebookRenameInput = {
  /** notebook id */
  id: string;
  name: string;
};

export type NotebookSetAccessInput = {
  /** notebook id */
  id: string;
  access: "private" | "published";
};

export type NotebookSetPrivacyInput = {
  /** notebook id */
  id: string;
  /** write (default): the agent reads and writes here, through the gate; read: every agent write is refused; none: nothing of the notebook reaches the agent through any tool */
  agent?: "write" | "read" | "none";
  /** allowed (default); local-only: its text never goes to a model, embedder or reranker that sends data off this machine */
  egress?: "allowed" | "local-only";
};

export type OutlineGetInput = {
  /** document id, or any block in it */
  id: string;
};

export type RefBacklinksInput = {
  /** block id */
  id: string;
};

export type RefForwardInput = {
  /** block or document id */
  id: string;
};

export type RerankRerankInput = {
  query: string;
  /** block ids, in the order to keep if the reranker cannot run */
  ids: string[];
};

export type SearchFulltextInput = {
  query: string;
  /** only these notebooks */
  notebooks?: string[];
  /** only this document and the documents below it: its id, or a path of ids such as <notebook>/<document> */
  path?: string;
  types?: Array<"document" | "heading" | "paragraph" | "list" | "listItem" | "code" | "math" | "table" | "blockquote" | "callout" | "thematicBreak" | "html" | "embed">;
  /** e.g. h1, h2, ordered, task, note */
  subtypes?: string[];
  page?: number;
  pageSize?: number;
  /** count hits per document (over the first 10,000 hits) also when the words have more than 1,000 hits; below that they are always counted */
  documentCounts?: boolean;
};

export type SearchFulltextOutput = {
  query: string;
  page: number;
  pageSize: number;
  total: number;
  totalIsLowerBound?: boolean;
  rankedOver?: number;
  documentsCountedOver?: number;
  documents?: Array<{
    documentId: string;
    hpath?: string;
    hits: number;
  }>;
  results: Array<{
    id: string;
    documentId: string;
    notebook?: string;
    hpath?: string;
    type: string;
    subtype?: string | null;
    /** HTML-escaped text; matches inside <mark> */
    snippet: string;
    score?: number;
  }>;
};

export type SearchHybridInput = {
  query: string;
  /** only these notebooks */
  notebooks?: string[];
  /** only this document and the documents below it: its id, or a path of ids such as <notebook>/<document> */
  path?: string;
  types?: Array<"document" | "heading" | "paragraph" | "list" | "listItem" | "code" | "math" | "table" | "blockquote" | "callout" | "thematicBreak" | "html" | "embed">;
  /** e.g. h1, h2, ordered, task, note */
  subtypes?: string[];
  page?: number;
  pageSize?: number;
};

export type SearchSemanticInput = {
  query: string;
  /** only these notebooks */
  notebooks?: string[];
  /** only this document and the documents below it: its id, or a path of ids such as <notebook>/<document> */
  path?: string;
  types?: Array<"document" | "heading" | "paragraph" | "list" | "listItem" | "code" | "math" | "table" | "blockquote" | "callout" | "thematicBreak" | "html" | "embed">;
  /** e.g. h1, h2, ordered, task, note */
  subtypes?: string[];
  page?: number;
  pageSize?: number;
};

export type SkillInstallInput = {
  path: string;
  replace?: boolean;
  dryRun?: boolean;
};

export type SkillInstallUrlInput = {
  url: string;
  replace?: boolean;
  dryRun?: boolean;
};

export type SkillListInput = Record<string, never>;

export type SkillLoadInput = {
  name: string;
  file?: string;
};

export type SkillRemoveInput = {
  name: string;
};

export type SkillRenameInput = {
  name: string;
  newName: string;
};

export type SkillRestoreVersionInput = {
  name: string;
  version: string;
};

export type SkillSaveInput = {
  name: string;
  content: string;
  files?: {
    [key: string]: string | undefined;
  };
};

export type SkillVersionsInput = {
  name?: string;
  version?: string;
};

export type SnapshotCreateInput = {
  memo?: string;
};

export type SnapshotDiffInput = {
  from: string;
  to?: string;
};

export type SnapshotGetInput = {
  id: string;
};

export type SnapshotListInput = Record<string, never>;

export type SnapshotPurgeInput = Record<string, never>;

export type SnapshotRollbackInput = {
  id: string;
};

export type SnapshotTagInput = {
  id: string;
  tag: string;
};

export type SnapshotUntagInput = {
  id: string;
  tag: string;
};

export type SnapshotVerifyInput = Record<string, never>;

export type SqlQueryInput = {
  sql: string;
  limit?: number;
  timeoutMs?: number;
};

export type SqlSchemaInput = Record<string, never>;

export type SystemCurrentTimeInput = Record<string, never>;

export type SystemInfoInput = Record<string, never>;

export type TagBlocksInput = {
  tag: string;
  limit?: number;
};

export type TagListInput = {
  prefix?: string;
};

export type TagListOutput = {
  tags: Array<{
    tag: string;
    blocks: number;
  }>;
};

/** Every operation: its path and query parameters, body, and the JSON answered on success. */
export interface Operations {
  answerConfirmation: {
    /** Answer a confirmation once, for the arguments shown */
    params: { id: string };
    body: {
      approved: boolean;
      always?: boolean;
      argsHash: string;
      notebook?: string | null;
      expiresAt?: string;
    };
    response: {
      confirmation: Confirmation;
    };
  };
  answerQuestion: {
    /** Answer the agent's question */
    params: { id: string; questionId: string };
    body: {
      answers: Array<string[]>;
    };
    response: {
      answered: boolean;
    };
  };
  answerSessionConfirmation: {
    /** Answer one of the session's confirmations */
    params: { id: string; confirmationId: string };
    body: {
      approved: boolean;
      argsHash: string;
      always?: boolean;
    };
    response: {
      confirmation: Confirmation;
    };
  };
  apiReference: {
    /** A readable API reference (Swagger UI) over this document */
    response: string;
  };
  apiReferenceAsset: {
    /** The reference page's scripts and styles, served by the kernel (no CDN) */
    params: { file: string };
    response: string;
  };
  approveMcpTool: {
    /** Approve the definition shown (its hash) of an external tool */
    params: { name: string; tool: string };
    body: {
      hash: string;
    };
    response: {
      server: McpServer;
    };
  };
  attr_get: {
    /** A block's attributes, including created, updated and updatedBy. */
    body: AttrGetInput;
    response: {
      result: unknown;
    };
  };
  attr_set: {
    /** Set attributes on a block; a null value removes the attribute. */
    body: AttrSetInput;
    response: {
      result: unknown;
    };
  };
  block_append: {
    /** Add blocks parsed from Markdown as the last children of a block or document. */
    body: BlockAppendInput;
    response: {
      result: unknown;
    };
  };
  block_batch_get: {
    /** Several blocks at once; ids that do not exist are listed as missing. */
    body: BlockBatchGetInput;
    response: {
      result: unknown;
    };
  };
  block_delete: {
    /** Delete a block and its children. */
    body: BlockDeleteInput;
    response: {
      result: unknown;
    };
  };
  block_get: {
    /** A block with its children and its Markdown. */
    body: BlockGetInput;
    response: {
      result: unknown;
    };
  };
  block_get_children: {
    /** The direct children of a block, summarised. */
    body: BlockGetChildrenInput;
    response: {
      result: unknown;
    };
  };
  block_insert: {
    /** Insert blocks parsed from Markdown after previousId, before nextId, or as the last children of parentId (give exactly one). */
    body: BlockInsertInput;
    response: {
      result: unknown;
    };
  };
  block_move: {
    /** Move a block after previousId, or to be the first child of parentId (give exactly one), in any document. */
    body: BlockMoveInput;
    response: {
      result: unknown;
    };
  };
  block_prepend: {
    /** Add blocks parsed from Markdown as the first children of a block or document. */
    body: BlockPrependInput;
    response: {
      result: unknown;
    };
  };
  block_update: {
    /** Replace a block's content with Markdown; the block keeps its id and attributes. */
    body: BlockUpdateInput;
    response: {
      result: unknown;
    };
  };
  callAction: {
    /** Call any action by its path (each one is also listed on its own path) */
    params: { plugin: string; tool: string; action: string };
    body: {
      [key: string]: unknown;
    };
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  cancelJob: {
    /** Stop a job at its next safe point */
    params: { id: string };
    response: {
      job: Job;
      cancelling: boolean;
    };
  };
  cancelTurn: {
    /** Stop the running turn, and say which calls it stopped */
    params: { id: string };
    response: {
      cancelled: boolean;
      turnID?: string;
      running?: {
        [key: string]: unknown;
      };
    };
  };
  createGrant: {
    /** Grant an action ahead of time */
    body: {
      plugin: string;
      tool: string;
      action: string;
      notebook?: string;
      expiresAt?: string;
    };
    response: {
      grant: Grant;
    };
  };
  createSession: {
    /** A new agent session */
    body: {
      title?: string;
    };
    response: SavedSession;
  };
  dailynote_append: {
    /** Add Markdown at the end of a day's note, creating the note if needed. */
    body: DailynoteAppendInput;
    response: {
      result: unknown;
    };
  };
  dailynote_get: {
    /** The daily note of a date (today by default), if it exists. */
    body: DailynoteGetInput;
    response: {
      result: unknown;
    };
  };
  dailynote_prepend: {
    /** Add Markdown at the start of a day's note, creating the note if needed. */
    body: DailynotePrependInput;
    response: {
      result: unknown;
    };
  };
  deleteSession: {
    /** Delete a session (409 while a turn runs) */
    params: { id: string };
    response: void;
  };
  document_create: {
    /** Create a document in a notebook (optionally under a parent document), from Markdown. */
    body: DocumentCreateInput;
    response: {
      result: DocumentCreateOutput;
    };
  };
  document_duplicate: {
    /** Copy a document (not its child documents) beside it, with new block ids. */
    body: DocumentDuplicateInput;
    response: {
      result: unknown;
    };
  };
  document_get: {
    /** A document's whole block tree. */
    body: DocumentGetInput;
    response: {
      result: unknown;
    };
  };
  document_get_markdown: {
    /** A document's content as Markdown. */
    body: DocumentGetMarkdownInput;
    response: {
      result: DocumentGetMarkdownOutput;
    };
  };
  document_info: {
    /** A document's title, place, times, author of the last change, block count, child documents and headings. */
    body: DocumentInfoInput;
    response: {
      result: DocumentInfoOutput;
    };
  };
  document_list: {
    /** The documents at the top of a notebook, or under a parent document. */
    body: DocumentListInput;
    response: {
      result: DocumentListOutput;
    };
  };
  document_move: {
    /** Move a document, with the documents below it, to another notebook or parent document. */
    body: DocumentMoveInput;
    response: {
      result: unknown;
    };
  };
  document_remove: {
    /** Remove a document and every document below it. */
    body: DocumentRemoveInput;
    response: {
      result: unknown;
    };
  };
  document_rename: {
    /** Change a document's title. */
    body: DocumentRenameInput;
    response: {
      result: unknown;
    };
  };
  embeddings_index: {
    /** Embed every block that is pending now and wait until each is embedded or has failed, reporting progress; optionally everything again (reindex) or the failed ones too (retryFailed). */
    body: EmbeddingsIndexInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  embeddings_reindex: {
    /** Embed every block again (in the background); the old vectors answer until replaced. */
    body: EmbeddingsReindexInput;
    response: {
      result: unknown;
    };
  };
  embeddings_retry_failed: {
    /** Retry the blocks whose embedding failed, now (in the background). */
    body: EmbeddingsRetryFailedInput;
    response: {
      result: unknown;
    };
  };
  embeddings_status: {
    /** How far the embedding of the notes has come: total, indexed, pending, failed, ignored (by reason), the model, the last error, throughput. */
    body: EmbeddingsStatusInput;
    response: {
      result: unknown;
    };
  };
  export_markdown: {
    /** Write a notebook or a document (with the documents below it) as .md files into a folder; flavor obsidian writes front matter, [[wiki links]], #tags and callouts as Obsidian reads them, with attachment */
    body: ExportMarkdownInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  gate: {
    /** What limits the agent: deny rules, auto mode, grants, notebook privacy */
    response: {
      allowAutoMode: boolean;
      deny: unknown[];
      grants: number;
      notebooks: NotebookPrivacy[];
    };
  };
  getConfirmation: {
    /** One confirmation */
    params: { id: string };
    response: {
      confirmation: Confirmation;
    };
  };
  getJob: {
    /** One job's record */
    params: { id: string };
    response: {
      job: Job;
    };
  };
  getSession: {
    /** A session, with its running turn folded in */
    params: { id: string };
    response: {
      session: Session;
    };
  };
  health: {
    /** Whether the kernel answers, and its version */
    response: {
      ok: boolean;
      version: string;
    };
  };
  history_clear: {
    /** Delete the versions of one document, or of all documents. */
    body: HistoryClearInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  history_get: {
    /** One version of a document, with its full content. */
    body: HistoryGetInput;
    response: {
      result: unknown;
    };
  };
  history_list: {
    /** The versions of a document, newest first: when, what happened (update, move, remove, rollback) and who did it. */
    body: HistoryListInput;
    response: {
      result: unknown;
    };
  };
  history_rollback: {
    /** Restore a document to one of its versions (also a removed document); the current state is kept as a version first. */
    body: HistoryRollbackInput;
    response: {
      result: unknown;
    };
  };
  history_search: {
    /** Versions by text, notebook, operation or time range, newest documents first. */
    body: HistorySearchInput;
    response: {
      result: unknown;
    };
  };
  import_markdown: {
    /** Import a .md file or a folder of them (folders become documents holding their contents). */
    body: ImportMarkdownInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  index_problems: {
    /** Files skipped because they are not valid documents or notebooks, with the reason. */
    body: IndexProblemsInput;
    response: {
      result: unknown;
    };
  };
  index_rebuild: {
    /** Rebuild the index from the document files (they are not changed). */
    body: IndexRebuildInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  jobEvents: {
    /** A job's record, its progress, and its end */
    params: { id: string };
    response: string;
  };
  listConfirmations: {
    /** Confirmations, by status */
    query: { status?: "pending" | "approved" | "rejected" | "consumed" | "expired" };
    response: {
      confirmations: Confirmation[];
    };
  };
  listGrants: {
    /** Standing grants */
    response: {
      grants: Grant[];
    };
  };
  listJobs: {
    /** Long actions, running and ended */
    response: {
      jobs: Job[];
    };
  };
  listMcpServers: {
    /** External MCP servers, their tools, and definitions waiting for approval */
    response: {
      servers: McpServer[];
    };
  };
  listPlugins: {
    /** Every plugin found, its state and the effects of each action */
    response: {
      plugins: Plugin[];
      backends: Backend[];
      configProblems?: unknown[];
    };
  };
  listSessions: {
    /** Sessions, newest first */
    query: { page?: number; pageSize?: number; title?: string };
    response: {
      total: number;
      sessions: SessionSummary[];
    };
  };
  mcpDelete: {
    /** The Model Context Protocol, Streamable HTTP transport (JSON-RPC) */
    response: {
      [key: string]: unknown;
    };
  };
  mcpGet: {
    /** The Model Context Protocol, Streamable HTTP transport (JSON-RPC) */
    response: string;
  };
  mcpPost: {
    /** The Model Context Protocol, Streamable HTTP transport (JSON-RPC) */
    body: {
      [key: string]: unknown;
    };
    response: {
      [key: string]: unknown;
    };
  };
  notebook_create: {
    /** Create a notebook. */
    body: NotebookCreateInput;
    response: {
      result: NotebookCreateOutput;
    };
  };
  notebook_list: {
    /** List the notebooks you can see, with their access (private or published) and number of top-level documents. */
    body: NotebookListInput;
    response: {
      result: NotebookListOutput;
    };
  };
  notebook_remove: {
    /** Remove a notebook with all its documents. */
    body: NotebookRemoveInput;
    response: {
      result: unknown;
    };
  };
  notebook_rename: {
    /** Rename a notebook. */
    body: NotebookRenameInput;
    response: {
      result: unknown;
    };
  };
  notebook_set_access: {
    /** Make a notebook private or published (readable by reader tokens). */
    body: NotebookSetAccessInput;
    response: {
      result: unknown;
    };
  };
  notebook_set_privacy: {
    /** Set what the agent may do in a notebook and whether its text may leave this machine. */
    body: NotebookSetPrivacyInput;
    response: {
      result: unknown;
    };
  };
  openApiDocument: {
    /** This document */
    response: {
      [key: string]: unknown;
    };
  };
  outline_get: {
    /** The headings of a document, nested by level. */
    body: OutlineGetInput;
    response: {
      result: unknown;
    };
  };
  pendingInSession: {
    /** Confirmations and questions waiting in a session */
    params: { id: string };
    response: {
      confirmations: Confirmation[];
      questions: Question[];
    };
  };
  previewRequest: {
    /** What the next model request would send, without sending it */
    params: { id: string };
    query: { message?: string };
    response: {
      preview: {
        [key: string]: unknown;
      };
    };
  };
  ref_backlinks: {
    /** Blocks that refer to this block. */
    body: RefBacklinksInput;
    response: {
      result: unknown;
    };
  };
  ref_forward: {
    /** The references made by a block, or by every block of a document, and whether each still resolves. */
    body: RefForwardInput;
    response: {
      result: unknown;
    };
  };
  rerank_rerank: {
    /** Orders the given blocks by the reranker's judgement of how well each answers the query (best first, with its score). */
    body: RerankRerankInput;
    response: {
      result: unknown;
    };
  };
  revokeGrant: {
    /** Revoke a grant */
    params: { id: string };
    response: {
      revoked: unknown;
    };
  };
  rollbackTurn: {
    /** Undo a turn's writes to the notes */
    params: { id: string; turnId: string };
    body: {
      force?: boolean;
    };
    response: {
      revision: number;
    };
  };
  saveSession: {
    /** Save a session at a revision (409 with the current one on a conflict) */
    params: { id: string };
    body: {
      entries: Array<{
        id: string;
        type: string;
      }>;
      expectedRevision?: number;
      commitTurnID?: string;
    };
    response: SavedSession;
  };
  search_fulltext: {
    /** Full-text search. */
    body: SearchFulltextInput;
    response: {
      result: SearchFulltextOutput;
    };
  };
  search_hybrid: {
    /** Hybrid search: the full-text search of this query (same query language) and a semantic search by meaning, each for its best hits, fused by reciprocal rank fusion (k = 60), then the best candidates reo */
    body: SearchHybridInput;
    response: {
      result: unknown;
    };
  };
  search_semantic: {
    /** Semantic search: the blocks nearest in meaning to the query (by the configured embedder's vectors), with the same filters as full-text search. */
    body: SearchSemanticInput;
    response: {
      result: unknown;
    };
  };
  setPluginEnabled: {
    /** Enable or disable a plugin while serving */
    params: { id: string };
    body: {
      enabled: boolean;
    };
    response: {
      plugin: Plugin;
    };
  };
  setSessionMode: {
    /** Ask before effects (confirm) or not (auto, if allowed) */
    params: { id: string };
    body: {
      mode: "confirm" | "auto";
    };
    response: {
      mode: "confirm" | "auto";
    };
  };
  skill_install: {
    /** Install skills from a folder or a .zip / .tar.gz archive on this machine (absolute path). */
    body: SkillInstallInput;
    response: {
      result: unknown;
    };
  };
  skill_install_url: {
    /** Install skills from a .zip / .tar.gz archive or a single SKILL.md downloaded from an http(s) URL, with the same checks as install; all or nothing, the answer lists every file written. */
    body: SkillInstallUrlInput;
    response: {
      result: unknown;
    };
  };
  skill_list: {
    /** Every skill: name, description, where it lives, its token cost in the prompt and whether it is listed there, warnings (such as scripts it ships, which are never run here), and the broken ones with the */
    body: SkillListInput;
    response: {
      result: unknown;
    };
  };
  skill_load: {
    /** Read a skill's instructions (the body of its SKILL.md), or with `file` one file of its folder (a path relative to the folder, such as references/guide.md). */
    body: SkillLoadInput;
    response: {
      result: unknown;
    };
  };
  skill_remove: {
    /** Remove a skill of the workspace, its whole folder. */
    body: SkillRemoveInput;
    response: {
      result: unknown;
    };
  };
  skill_rename: {
    /** Rename a skill of the workspace: its folder and the name in its SKILL.md. */
    body: SkillRenameInput;
    response: {
      result: unknown;
    };
  };
  skill_restore_version: {
    /** Put a kept version back as the skill's whole folder (also of a removed skill); the skill as it is now is kept as a version first. */
    body: SkillRestoreVersionInput;
    response: {
      result: unknown;
    };
  };
  skill_save: {
    /** Create a skill, or replace the SKILL.md (and the files given) of one in the workspace. */
    body: SkillSaveInput;
    response: {
      result: unknown;
    };
  };
  skill_versions: {
    /** Earlier versions of a skill, newest first: kept before each save that replaced it, rename, removal, install over it, restore or snapshot rollback (when, what, who, its files). */
    body: SkillVersionsInput;
    response: {
      result: unknown;
    };
  };
  snapshot_create: {
    /** Take a snapshot of all notes and skills. */
    body: SnapshotCreateInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  snapshot_diff: {
    /** Files added, removed and changed between two snapshots, or a snapshot and now; for changed documents, the blocks added, removed and changed; `skills` lists skill files added, removed and changed when  */
    body: SnapshotDiffInput;
    response: {
      result: unknown;
    };
  };
  snapshot_get: {
    /** One snapshot with its table of files. */
    body: SnapshotGetInput;
    response: {
      result: unknown;
    };
  };
  snapshot_list: {
    /** Snapshots, newest first: id, memo, time, origin (a person or agent:<session>/<turn>), tags. */
    body: SnapshotListInput;
    response: {
      result: unknown;
    };
  };
  snapshot_purge: {
    /** Delete stored file contents that no snapshot refers to. */
    body: SnapshotPurgeInput;
    response: {
      result: unknown;
    };
  };
  snapshot_rollback: {
    /** Make the notes and skills exactly as they were in a snapshot: files created since are removed, changed ones restored, and the index updated. */
    body: SnapshotRollbackInput;
    response: {
      result: unknown;
    } | {
      job: Job;
    };
  };
  snapshot_tag: {
    /** Add a tag to a snapshot. */
    body: SnapshotTagInput;
    response: {
      result: unknown;
    };
  };
  snapshot_untag: {
    /** Remove a tag from a snapshot. */
    body: SnapshotUntagInput;
    response: {
      result: unknown;
    };
  };
  snapshot_verify: {
    /** Read every stored object again and report any that is missing or damaged. */
    body: SnapshotVerifyInput;
    response: {
      result: unknown;
    };
  };
  sql_query: {
    /** Run one SELECT or WITH statement on the index (read-only). */
    body: SqlQueryInput;
    response: {
      result: unknown;
    };
  };
  sql_schema: {
    /** The tables of the index, their columns, and what each column means. */
    body: SqlSchemaInput;
    response: {
      result: unknown;
    };
  };
  startTurn: {
    /** Send the person's message; the turn streams back */
    params: { id: string };
    body: {
      message: string;
    };
    response: string;
  };
  system_current_time: {
    /** The current date and time, in UTC and in the kernel's local time zone. */
    body: SystemCurrentTimeInput;
    response: {
      result: unknown;
    };
  };
  system_info: {
    /** The kernel version, when it started, and how long it has been running. */
    body: SystemInfoInput;
    response: {
      result: unknown;
    };
  };
  tag_blocks: {
    /** Blocks carrying a tag (or one nested under it), most recently updated first. */
    body: TagBlocksInput;
    response: {
      result: unknown;
    };
  };
  tag_list: {
    /** Tags in use, with block counts. */
    body: TagListInput;
    response: {
      result: TagListOutput;
    };
  };
  usage: {
    /** Model and backend usage, priced, with the budgets */
    query: { by?: "day" | "session" | "model"; since?: string; until?: string; session?: string };
    response: {
      by: string;
      rows: UsageRow[];
      total: UsageRow;
      budgets: {
        [key: string]: unknown;
      };
    };
  };
}

/** How each operation is called. */
export const OPERATIONS = {
  answerConfirmation: { method: 'POST', path: '/api/confirmations/{id}/answer' },
  answerQuestion: { method: 'POST', path: '/api/agent/sessions/{id}/questions/{questionId}/answer' },
  answerSessionConfirmation: { method: 'POST', path: '/api/agent/sessions/{id}/confirmations/{confirmationId}/answer' },
  apiReference: { method: 'GET', path: '/api/docs' },
  apiReferenceAsset: { method: 'GET', path: '/api/docs/assets/swagger-ui-dist/{file}' },
  approveMcpTool: { method: 'POST', path: '/api/mcp/servers/{name}/tools/{tool}/approve' },
  attr_get: { method: 'POST', path: '/api/actions/blocks/attr/get' },
  attr_set: { method: 'POST', path: '/api/actions/blocks/attr/set' },
  block_append: { method: 'POST', path: '/api/actions/blocks/block/append' },
  block_batch_get: { method: 'POST', path: '/api/actions/blocks/block/batch_get' },
  block_delete: { method: 'POST', path: '/api/actions/blocks/block/delete' },
  block_get: { method: 'POST', path: '/api/actions/blocks/block/get' },
  block_get_children: { method: 'POST', path: '/api/actions/blocks/block/get_children' },
  block_insert: { method: 'POST', path: '/api/actions/blocks/block/insert' },
  block_move: { method: 'POST', path: '/api/actions/blocks/block/move' },
  block_prepend: { method: 'POST', path: '/api/actions/blocks/block/prepend' },
  block_update: { method: 'POST', path: '/api/actions/blocks/block/update' },
  callAction: { method: 'POST', path: '/api/actions/{plugin}/{tool}/{action}' },
  cancelJob: { method: 'POST', path: '/api/jobs/{id}/cancel' },
  cancelTurn: { method: 'POST', path: '/api/agent/sessions/{id}/turns/cancel' },
  createGrant: { method: 'POST', path: '/api/grants' },
  createSession: { method: 'POST', path: '/api/agent/sessions' },
  dailynote_append: { method: 'POST', path: '/api/actions/blocks/dailynote/append' },
  dailynote_get: { method: 'POST', path: '/api/actions/blocks/dailynote/get' },
  dailynote_prepend: { method: 'POST', path: '/api/actions/blocks/dailynote/prepend' },
  deleteSession: { method: 'DELETE', path: '/api/agent/sessions/{id}' },
  document_create: { method: 'POST', path: '/api/actions/blocks/document/create' },
  document_duplicate: { method: 'POST', path: '/api/actions/blocks/document/duplicate' },
  document_get: { method: 'POST', path: '/api/actions/blocks/document/get' },
  document_get_markdown: { method: 'POST', path: '/api/actions/blocks/document/get_markdown' },
  document_info: { method: 'POST', path: '/api/actions/blocks/document/info' },
  document_list: { method: 'POST', path: '/api/actions/blocks/document/list' },
  document_move: { method: 'POST', path: '/api/actions/blocks/document/move' },
  document_remove: { method: 'POST', path: '/api/actions/blocks/document/remove' },
  document_rename: { method: 'POST', path: '/api/actions/blocks/document/rename' },
  embeddings_index: { method: 'POST', path: '/api/actions/search-semantic/embeddings/index' },
  embeddings_reindex: { method: 'POST', path: '/api/actions/search-semantic/embeddings/reindex' },
  embeddings_retry_failed: { method: 'POST', path: '/api/actions/search-semantic/embeddings/retry_failed' },
  embeddings_status: { method: 'POST', path: '/api/actions/search-semantic/embeddings/status' },
  export_markdown: { method: 'POST', path: '/api/actions/blocks/export/markdown' },
  gate: { method: 'GET', path: '/api/gate' },
  getConfirmation: { method: 'GET', path: '/api/confirmations/{id}' },
  getJob: { method: 'GET', path: '/api/jobs/{id}' },
  getSession: { method: 'GET', path: '/api/agent/sessions/{id}' },
  health: { method: 'GET', path: '/healthz' },
  history_clear: { method: 'POST', path: '/api/actions/history/history/clear' },
  history_get: { method: 'POST', path: '/api/actions/history/history/get' },
  history_list: { method: 'POST', path: '/api/actions/history/history/list' },
  history_rollback: { method: 'POST', path: '/api/actions/history/history/rollback' },
  history_search: { method: 'POST', path: '/api/actions/history/history/search' },
  import_markdown: { method: 'POST', path: '/api/actions/blocks/import/markdown' },
  index_problems: { method: 'POST', path: '/api/actions/blocks/index/problems' },
  index_rebuild: { method: 'POST', path: '/api/actions/blocks/index/rebuild' },
  jobEvents: { method: 'GET', path: '/api/jobs/{id}/events' },
  listConfirmations: { method: 'GET', path: '/api/confirmations' },
  listGrants: { method: 'GET', path: '/api/grants' },
  listJobs: { method: 'GET', path: '/api/jobs' },
  listMcpServers: { method: 'GET', path: '/api/mcp/servers' },
  listPlugins: { method: 'GET', path: '/api/plugins' },
  listSessions: { method: 'GET', path: '/api/agent/sessions' },
  mcpDelete: { method: 'DELETE', path: '/mcp' },
  mcpGet: { method: 'GET', path: '/mcp' },
  mcpPost: { method: 'POST', path: '/mcp' },
  notebook_create: { method: 'POST', path: '/api/actions/blocks/notebook/create' },
  notebook_list: { method: 'POST', path: '/api/actions/blocks/notebook/list' },
  notebook_remove: { method: 'POST', path: '/api/actions/blocks/notebook/remove' },
  notebook_rename: { method: 'POST', path: '/api/actions/blocks/notebook/rename' },
  notebook_set_access: { method: 'POST', path: '/api/actions/blocks/notebook/set_access' },
  notebook_set_privacy: { method: 'POST', path: '/api/actions/blocks/notebook/set_privacy' },
  openApiDocument: { method: 'GET', path: '/api/openapi.json' },
  outline_get: { method: 'POST', path: '/api/actions/blocks/outline/get' },
  pendingInSession: { method: 'GET', path: '/api/agent/sessions/{id}/pending' },
  previewRequest: { method: 'GET', path: '/api/agent/sessions/{id}/preview' },
  ref_backlinks: { method: 'POST', path: '/api/actions/blocks/ref/backlinks' },
  ref_forward: { method: 'POST', path: '/api/actions/blocks/ref/forward' },
  rerank_rerank: { method: 'POST', path: '/api/actions/rerank/rerank/rerank' },
  revokeGrant: { method: 'DELETE', path: '/api/grants/{id}' },
  rollbackTurn: { method: 'POST', path: '/api/agent/sessions/{id}/turns/{turnId}/rollback' },
  saveSession: { method: 'PUT', path: '/api/agent/sessions/{id}' },
  search_fulltext: { method: 'POST', path: '/api/actions/search-fulltext/search/fulltext' },
  search_hybrid: { method: 'POST', path: '/api/actions/search-fulltext/search/hybrid' },
  search_semantic: { method: 'POST', path: '/api/actions/search-semantic/search/semantic' },
  setPluginEnabled: { method: 'PUT', path: '/api/plugins/{id}' },
  setSessionMode: { method: 'PUT', path: '/api/agent/sessions/{id}/mode' },
  skill_install: { method: 'POST', path: '/api/actions/skills/skill/install' },
  skill_install_url: { method: 'POST', path: '/api/actions/skills/skill/install_url' },
  skill_list: { method: 'POST', path: '/api/actions/skills/skill/list' },
  skill_load: { method: 'POST', path: '/api/actions/skills/skill/load' },
  skill_remove: { method: 'POST', path: '/api/actions/skills/skill/remove' },
  skill_rename: { method: 'POST', path: '/api/actions/skills/skill/rename' },
  skill_restore_version: { method: 'POST', path: '/api/actions/skills/skill/restore_version' },
  skill_save: { method: 'POST', path: '/api/actions/skills/skill/save' },
  skill_versions: { method: 'POST', path: '/api/actions/skills/skill/versions' },
  snapshot_create: { method: 'POST', path: '/api/actions/snapshots/snapshot/create' },
  snapshot_diff: { method: 'POST', path: '/api/actions/snapshots/snapshot/diff' },
  snapshot_get: { method: 'POST', path: '/api/actions/snapshots/snapshot/get' },
  snapshot_list: { method: 'POST', path: '/api/actions/snapshots/snapshot/list' },
  snapshot_purge: { method: 'POST', path: '/api/actions/snapshots/snapshot/purge' },
  snapshot_rollback: { method: 'POST', path: '/api/actions/snapshots/snapshot/rollback' },
  snapshot_tag: { method: 'POST', path: '/api/actions/snapshots/snapshot/tag' },
  snapshot_untag: { method: 'POST', path: '/api/actions/snapshots/snapshot/untag' },
  snapshot_verify: { method: 'POST', path: '/api/actions/snapshots/snapshot/verify' },
  sql_query: { method: 'POST', path: '/api/actions/sql/sql/query' },
  sql_schema: { method: 'POST', path: '/api/actions/sql/sql/schema' },
  startTurn: { method: 'POST', path: '/api/agent/sessions/{id}/turns' },
  system_current_time: { method: 'POST', path: '/api/actions/system/system/current_time' },
  system_info: { method: 'POST', path: '/api/actions/system/system/info' },
  tag_blocks: { method: 'POST', path: '/api/actions/blocks/tag/blocks' },
  tag_list: { method: 'POST', path: '/api/actions/blocks/tag/list' },
  usage: { method: 'GET', path: '/api/usage' },
} as const;
