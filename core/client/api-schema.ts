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
  ifInterrupted?: string;
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
    ok?: boolean;
  }>;
  turnID?: string;
  conflicts?: Array<{
    [key: string]: unknown;
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
  permissionMode?: "confirm" | "auto";
  recoveryTurnID?: string;
  recoveryState?: string;
  recoveryFrom?: number;
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
  adminOnly?: boolean;
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

export type AuditRecord = {
  seq: number;
  time: string;
  prev: string;
  hash: string;
  plugin: string;
  tool: string;
  action: string;
  effects: Effect[];
  argsHash: string;
  outcome: "ok" | "error" | "refused" | "egress_denied";
  errorCode?: string;
  details?: {
    [key: string]: unknown;
  };
  principal: {
    kind: string;
    name: string;
    role?: string;
    sessionId?: string;
    turnId?: string;
    client?: string;
  };
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

export type AttrGetOutput = {
  id: string;
  attrs: {
    [key: string]: string | undefined;
  };
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

export type AttrSetOutput = {
  id: string;
  attrs: {
    [key: string]: string | undefined;
  };
};

export type BlockAppendInput = {
  /** block or document id */
  parentId: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
};

export type BlockAppendOutput = {
  documentId: string;
  /** the block the new blocks went into */
  parentId: string;
  /** the new top-level blocks, in order */
  ids: string[];
  /** when the parent is a list, quote or callout: its updated after the change (it moves on with a change inside it); pass it as expectedUpdated to change the parent next */
  parentUpdated?: string;
};

export type BlockBatchGetInput = {
  ids: string[];
};

export type BlockBatchGetOutput = {
  blocks: Array<{
    block: {
      id: string;
      /** document, heading, paragraph, list, listItem, code, math, table, blockquote, callout, thematicBreak, html or embed */
      type: string;
      /** heading: h1..h6; list: ordered, unordered or task (an ordered list of tasks is ordered, its items task); listItem: task; code: the fence's info string, its language first; callout: its kind */
      subtype?: string;
      /** a leaf block's Markdown source (a document: its title) */
      content?: string;
      /** a task list item: whether it is checked */
      checked?: boolean;
      /** an ordered list: the number of its first item, when not 1 */
      start?: number;
      /** created, updated, updatedBy, custom-* and the other attributes */
      attrs: {
        [key: string]: string | undefined;
      };
      /** child blocks, each of this same shape */
      children?: Array<{
        [key: string]: unknown;
      }>;
    };
    documentId: string;
    /** the parent block; null for a document */
    parentId: string | null;
    notebook: string;
    /** the document's path of titles */
    hpath: string;
    /** the block as Markdown (a document: its content) */
    markdown: string;
  }>;
  /** ids given that do not exist or that the caller may not see */
  missing: string[];
  /** blocks whose document file is not a valid document (repair it by hand, or roll it back from history) */
  unreadable?: Array<{
    id: string;
    message: string;
  }>;
};

export type BlockDeleteInput = {
  /** block id */
  id: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type BlockDeleteOutput = {
  /** the block and every block below it, and the list it leaves without items (removed with it) */
  deleted: string[];
  documentId: string;
};

export type BlockGetInput = {
  /** block id */
  id: string;
};

export type BlockGetOutput = {
  block: {
    id: string;
    /** document, heading, paragraph, list, listItem, code, math, table, blockquote, callout, thematicBreak, html or embed */
    type: string;
    /** heading: h1..h6; list: ordered, unordered or task (an ordered list of tasks is ordered, its items task); listItem: task; code: the fence's info string, its language first; callout: its kind */
    subtype?: string;
    /** a leaf block's Markdown source (a document: its title) */
    content?: string;
    /** a task list item: whether it is checked */
    checked?: boolean;
    /** an ordered list: the number of its first item, when not 1 */
    start?: number;
    /** created, updated, updatedBy, custom-* and the other attributes */
    attrs: {
      [key: string]: string | undefined;
    };
    /** child blocks, each of this same shape */
    children?: Array<{
      [key: string]: unknown;
    }>;
  };
  documentId: string;
  /** the parent block; null for a document */
  parentId: string | null;
  notebook: string;
  /** the document's path of titles */
  hpath: string;
  /** the block as Markdown (a document: its content) */
  markdown: string;
};

export type BlockGetChildrenInput = {
  /** block or document id */
  id: string;
  /** the first child's position (the next of the page before); default 0 */
  offset?: number;
  /** children in the page at most; default all the rest */
  limit?: number;
};

export type BlockGetChildrenOutput = {
  offset?: number;
  total?: number;
  next?: number | null;
  id: string;
  children: Array<{
    id: string;
    type: string;
    subtype: string | null;
    /** the first 200 characters of its content */
    preview: string;
    childCount: number;
    updated: string | null;
  }>;
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

export type BlockInsertOutput = {
  documentId: string;
  /** the block the new blocks went into */
  parentId: string;
  /** the new top-level blocks, in order */
  ids: string[];
  /** when the parent is a list, quote or callout: its updated after the change (it moves on with a change inside it); pass it as expectedUpdated to change the parent next */
  parentUpdated?: string;
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

export type BlockMoveOutput = {
  id: string;
  documentId: string;
  /** the moved block's new parent: the list item or list made to hold it, if one was */
  parentId: string;
  /** the new list item (a block moved into a list) or list (a list item moved out of one) made to hold the block */
  wrappedIn?: {
    id: string;
    type: "listItem" | "list";
  };
  /** the list the block was the last item of, removed */
  removedEmptyList?: string;
};

export type BlockPrependInput = {
  /** block or document id */
  parentId: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
};

export type BlockPrependOutput = {
  documentId: string;
  /** the block the new blocks went into */
  parentId: string;
  /** the new top-level blocks, in order */
  ids: string[];
  /** when the parent is a list, quote or callout: its updated after the change (it moves on with a change inside it); pass it as expectedUpdated to change the parent next */
  parentUpdated?: string;
};

export type BlockUpdateInput = {
  /** block id */
  id: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type BlockUpdateOutput = {
  documentId: string;
  id: string;
  /** blocks added after it when the Markdown held more than one */
  inserted: string[];
  updated: string;
};

export type DailynoteAppendInput = {
  /** notebook id */
  notebook: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  date?: string;
};

export type DailynoteAppendOutput = {
  /** the daily note */
  id: string;
  /** YYYY-MM-DD */
  date: string;
  /** whether this call created the note */
  created: boolean;
  /** the new top-level blocks (also when this call created the note) */
  ids: string[];
};

export type DailynoteGetInput = {
  /** notebook id */
  notebook: string;
  date?: string;
};

export type DailynoteGetOutput = {
  /** YYYY-MM-DD */
  date: string;
  notebook: string;
  /** the daily note, or null when there is none */
  id: string | null;
  hpath: string | null;
};

export type DailynotePrependInput = {
  /** notebook id */
  notebook: string;
  /** Markdown (GFM, with $$ math, ((id "anchor")) references and #tag# tags) */
  markdown: string;
  date?: string;
};

export type DailynotePrependOutput = {
  /** the daily note */
  id: string;
  /** YYYY-MM-DD */
  date: string;
  /** whether this call created the note */
  created: boolean;
  /** the new top-level blocks (also when this call created the note) */
  ids: string[];
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

export type DocumentDuplicateOutput = {
  id: string;
  notebook: string;
  parentId?: string | null;
  hpath: string;
  blockCount?: number;
};

export type DocumentGetInput = {
  /** document id */
  id: string;
};

export type DocumentGetOutput = {
  document: {
    id: string;
    /** document, heading, paragraph, list, listItem, code, math, table, blockquote, callout, thematicBreak, html or embed */
    type: string;
    /** heading: h1..h6; list: ordered, unordered or task (an ordered list of tasks is ordered, its items task); listItem: task; code: the fence's info string, its language first; callout: its kind */
    subtype?: string;
    /** a leaf block's Markdown source (a document: its title) */
    content?: string;
    /** a task list item: whether it is checked */
    checked?: boolean;
    /** an ordered list: the number of its first item, when not 1 */
    start?: number;
    /** created, updated, updatedBy, custom-* and the other attributes */
    attrs: {
      [key: string]: string | undefined;
    };
    /** child blocks, each of this same shape */
    children?: Array<{
      [key: string]: unknown;
    }>;
  };
  notebook: string;
  /** the parent document, or null */
  parentId: string | null;
  hpath: string;
};

export type DocumentGetMarkdownInput = {
  /** document id */
  id: string;
  /** where the part starts, in characters of the whole Markdown (the next of the part before); default 0 */
  offset?: number;
  /** the part's length at most, in characters; default the whole rest */
  limit?: number;
};

export type DocumentGetMarkdownOutput = {
  id: string;
  title: string;
  hpath: string;
  markdown: string;
  offset?: number;
  total?: number;
  next?: number | null;
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
  created?: string | null;
  updated?: string | null;
  updatedBy?: string | null;
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
    updated?: string | null;
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

export type DocumentMoveOutput = {
  id: string;
  notebook: string;
  parentId: string | null;
  hpath: string;
  /** the document and every document below it */
  moved: string[];
};

export type DocumentRemoveInput = {
  /** document id */
  id: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type DocumentRemoveOutput = {
  /** the document and every document below it */
  removed: string[];
};

export type DocumentRenameInput = {
  /** document id */
  id: string;
  title: string;
  /** The block's `updated` value you last read; if it changed since, the call fails with CONFLICT and nothing changes */
  expectedUpdated?: string;
};

export type DocumentRenameOutput = {
  id: string;
  title: string;
  updated: string;
};

export type EmbeddingsIndexInput = {
  reindex?: boolean;
  retryFailed?: boolean;
};

export type EmbeddingsIndexOutput = {
  /** done: nothing pending; breaker: the embedder kept failing; stopped: time limit or cancel; none: no embedder */
  outcome: "done" | "breaker" | "stopped" | "none";
  /** why it stopped, when outcome is stopped (its job then ends cancelled or timed_out) */
  stopped?: "time_limit" | "cancelled";
  /** an embedder is configured */
  enabled: boolean;
  embedder: {
    plugin: string;
    name: string;
    model: string;
    dimensions?: number;
    remote?: boolean;
  } | null;
  /** why semantic search cannot answer now */
  unavailable?: string;
  /** the active model (administrators only, as every field below) */
  model?: string;
  total?: number;
  indexed?: number;
  pending?: number;
  failed?: number;
  gaveUp?: number;
  stale?: number;
  /** blocks not embedded, by reason */
  ignored?: {
    [key: string]: number | undefined;
  };
  ignoredTotal?: number;
  lastError?: string | null;
  /** while the embedder is paused after failures */
  pausedUntil?: string | null;
  throughput?: {
    blocksPerSecond: number;
    blocks: number;
    windowMs: number;
  };
  /** the embeddings are being compared with the notes */
  comparing?: boolean;
  lastComparison?: {
    ms: number;
    changed: number;
    at: string;
    /** why the blocks were not compared (nothing changed since the last clean stop) */
    skipped?: string;
  };
  /** index changes not taken in yet */
  queued?: number;
  vectorIndex?: {
    state: "none" | "opening" | "rebuilding" | "ready" | "failed";
    size: number;
    problem?: string;
  };
};

export type EmbeddingsReindexInput = Record<string, never>;

export type EmbeddingsReindexOutput = {
  /** an embedder is configured */
  enabled: boolean;
  embedder: {
    plugin: string;
    name: string;
    model: string;
    dimensions?: number;
    remote?: boolean;
  } | null;
  /** why semantic search cannot answer now */
  unavailable?: string;
  /** the active model (administrators only, as every field below) */
  model?: string;
  total?: number;
  indexed?: number;
  pending?: number;
  failed?: number;
  gaveUp?: number;
  stale?: number;
  /** blocks not embedded, by reason */
  ignored?: {
    [key: string]: number | undefined;
  };
  ignoredTotal?: number;
  lastError?: string | null;
  /** while the embedder is paused after failures */
  pausedUntil?: string | null;
  throughput?: {
    blocksPerSecond: number;
    blocks: number;
    windowMs: number;
  };
  /** the embeddings are being compared with the notes */
  comparing?: boolean;
  lastComparison?: {
    ms: number;
    changed: number;
    at: string;
    /** why the blocks were not compared (nothing changed since the last clean stop) */
    skipped?: string;
  };
  /** index changes not taken in yet */
  queued?: number;
  vectorIndex?: {
    state: "none" | "opening" | "rebuilding" | "ready" | "failed";
    size: number;
    problem?: string;
  };
};

export type EmbeddingsRetryFailedInput = Record<string, never>;

export type EmbeddingsRetryFailedOutput = {
  /** blocks set to be embedded again */
  retried: number;
  /** an embedder is configured */
  enabled: boolean;
  embedder: {
    plugin: string;
    name: string;
    model: string;
    dimensions?: number;
    remote?: boolean;
  } | null;
  /** why semantic search cannot answer now */
  unavailable?: string;
  /** the active model (administrators only, as every field below) */
  model?: string;
  total?: number;
  indexed?: number;
  pending?: number;
  failed?: number;
  gaveUp?: number;
  stale?: number;
  /** blocks not embedded, by reason */
  ignored?: {
    [key: string]: number | undefined;
  };
  ignoredTotal?: number;
  lastError?: string | null;
  /** while the embedder is paused after failures */
  pausedUntil?: string | null;
  throughput?: {
    blocksPerSecond: number;
    blocks: number;
    windowMs: number;
  };
  /** the embeddings are being compared with the notes */
  comparing?: boolean;
  lastComparison?: {
    ms: number;
    changed: number;
    at: string;
    /** why the blocks were not compared (nothing changed since the last clean stop) */
    skipped?: string;
  };
  /** index changes not taken in yet */
  queued?: number;
  vectorIndex?: {
    state: "none" | "opening" | "rebuilding" | "ready" | "failed";
    size: number;
    problem?: string;
  };
};

export type EmbeddingsStatusInput = Record<string, never>;

export type EmbeddingsStatusOutput = {
  /** an embedder is configured */
  enabled: boolean;
  embedder: {
    plugin: string;
    name: string;
    model: string;
    dimensions?: number;
    remote?: boolean;
  } | null;
  /** why semantic search cannot answer now */
  unavailable?: string;
  /** the active model (administrators only, as every field below) */
  model?: string;
  total?: number;
  indexed?: number;
  pending?: number;
  failed?: number;
  gaveUp?: number;
  stale?: number;
  /** blocks not embedded, by reason */
  ignored?: {
    [key: string]: number | undefined;
  };
  ignoredTotal?: number;
  lastError?: string | null;
  /** while the embedder is paused after failures */
  pausedUntil?: string | null;
  throughput?: {
    blocksPerSecond: number;
    blocks: number;
    windowMs: number;
  };
  /** the embeddings are being compared with the notes */
  comparing?: boolean;
  lastComparison?: {
    ms: number;
    changed: number;
    at: string;
    /** why the blocks were not compared (nothing changed since the last clean stop) */
    skipped?: string;
  };
  /** index changes not taken in yet */
  queued?: number;
  vectorIndex?: {
    state: "none" | "opening" | "rebuilding" | "ready" | "failed";
    size: number;
    problem?: string;
  };
};

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

export type ExportMarkdownOutput = {
  /** the notebook or document exported */
  id: string;
  folder: string;
  flavor?: "markdown" | "obsidian";
  /** files written (when stopped, those written before the stop) */
  files: number;
  /** paths of the files written (at most 1000) */
  written: string[];
  /** flavor obsidian: links, tags and attachments written */
  obsidian?: {
    links?: number;
    approximated?: number;
    outside?: number;
    tagsKept?: number;
    attachments?: {
      [key: string]: number | undefined;
    };
    missingAttachments?: string[];
    attachmentsNotReplaced?: string[];
  };
  /** flavor markdown, when the notes link attachments: those linked and copied into <folder>/assets/, the names not found in the workspace's assets/ (missing) and files there already with other bytes, kept without overwrite (notReplaced) */
  attachments?: {
    linked: number;
    copied: number;
    missing?: string[];
    notReplaced?: string[];
  };
  /** present only when the call was stopped (time limit or cancel) before it finished */
  stopped?: "time_limit" | "cancelled";
  /** when stopped: the files the export would have written */
  planned?: number;
  /** when stopped: how far it came */
  message?: string;
};

export type HistoryClearInput = {
  id?: string;
};

export type HistoryClearOutput = {
  /** documents whose history was cleared */
  documents: number;
  /** when stopped: the documents there were to clear */
  of?: number;
  /** present only when the call was stopped (time limit or cancel) before it finished */
  stopped?: "time_limit" | "cancelled";
  /** when stopped: how far it came */
  message?: string;
};

export type HistoryGetInput = {
  id: string;
  version: string;
};

export type HistoryGetOutput = {
  /** <time>-<op>: sortable by time */
  version: string;
  documentId: string;
  /** the change this version was kept before */
  op: "update" | "move" | "remove" | "rollback";
  by: string;
  time: string;
  /** the notebook the document was in */
  notebook: string;
  /** data/-relative path of the document file */
  path: string;
  hpath: string;
  title: string;
  /** the document file as it was (JSON) */
  text: string;
};

export type HistoryListInput = {
  id: string;
};

export type HistoryListOutput = {
  versions: Array<{
    /** <time>-<op>: sortable by time */
    version: string;
    documentId: string;
    /** the change this version was kept before */
    op: "update" | "move" | "remove" | "rollback";
    by: string;
    time: string;
    /** the notebook the document was in */
    notebook: string;
    /** data/-relative path of the document file */
    path: string;
    hpath: string;
    title: string;
  }>;
};

export type HistoryRollbackInput = {
  id: string;
  version: string;
  /** for a removed document: the notebook to restore it into, at its top (where it was is used otherwise) */
  notebook?: string;
};

export type HistoryRollbackOutput = {
  id: string;
  version: string;
  /** data/-relative path written */
  restored: string;
  /** blocks of the version that are in another document now (moved there since): put back under a new id, as two blocks with one id cannot both be reached */
  renewed?: Array<{
    /** the new id */
    id: string;
    /** its id in the version (left out where the caller may not see the document it is in now) */
    was?: string;
    /** the document the block with that id is in now (left out where the caller may not see it) */
    in?: string;
  }>;
};

export type HistorySearchInput = {
  query?: string;
  notebook?: string;
  op?: "update" | "move" | "remove" | "rollback";
  from?: string;
  to?: string;
  limit?: number;
};

export type HistorySearchOutput = {
  results: Array<{
    /** <time>-<op>: sortable by time */
    version: string;
    documentId: string;
    /** the change this version was kept before */
    op: "update" | "move" | "remove" | "rollback";
    by: string;
    time: string;
    /** the notebook the document was in */
    notebook: string;
    /** data/-relative path of the document file */
    path: string;
    hpath: string;
    title: string;
  }>;
  /** stopped at the limit */
  truncated: boolean;
  /** set when the search stopped early (its time limit or a cancel): what it covered */
  message?: string;
  /** versions whose text could not be read (damaged, or removed by pruning while the search ran): their titles were searched, not their text */
  unreadable?: number;
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

export type ImportMarkdownOutput = {
  notebook: string;
  flavor: "markdown" | "obsidian" | "siyuan";
  /** documents written */
  documents: number;
  blocks: number;
  /** files skipped or imported as empty documents, and why (the first 1,000) */
  skipped: Array<{
    path: string;
    reason: string;
  }>;
  /** how many were skipped in all, when more than the 1,000 listed */
  skippedCount?: number;
  seconds: number;
  /** a plain Markdown import: links of its notes to local files inside the folder, now pointing into assets/ where the files were copied (the same bytes used again) */
  attachmentLinks?: number;
  /** flavor obsidian: what could and could not be mapped */
  obsidian?: {
    notes?: number;
    frontMatter?: number;
    links?: number;
    embeds?: number;
    tags?: number;
    attachments?: {
      [key: string]: number | undefined;
    };
    unresolved?: Array<{
      file: string;
      link: string;
    }>;
    unresolvedCount?: number;
    approximated?: Array<{
      file: string;
      link: string;
    }>;
    approximatedCount?: number;
    problems?: Array<{
      file: string;
      problem: string;
    }>;
  };
  /** flavor siyuan: ids, references and assets */
  siyuan?: {
    documents?: number;
    ids?: "kept" | "renewed";
    references?: number;
    referencesOutside?: number;
    assets?: {
      linked?: number;
      copied?: number;
      missing?: string[];
    };
    problems?: Array<{
      file: string;
      problem: string;
    }>;
  };
  /** present only when the call was stopped (time limit or cancel) before it finished */
  stopped?: "time_limit" | "cancelled";
  /** when stopped: the documents the import would have written */
  planned?: number;
  /** when stopped: how far it came */
  message?: string;
};

export type IndexProblemsInput = Record<string, never>;

export type IndexProblemsOutput = {
  problems: Array<{
    /** data/-relative */
    path: string;
    reason: string;
    /** an id found in two files: the other document (administrators only) */
    otherDocument?: string;
  }>;
};

export type IndexRebuildInput = Record<string, never>;

export type IndexRebuildOutput = {
  notebooks: number;
  documents: number;
  /** documents whose rows were written again */
  indexed: number;
  blocks: number;
  removed: number;
  problems: Array<{
    path: string;
    reason: string;
    /** an id found in two files: the other document */
    other?: string;
  }>;
};

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

export type NotebookRemoveOutput = {
  /** the notebook removed */
  removed: string;
  /** documents removed with it */
  documents: number;
};

export type NotebookRenameInput = {
  /** notebook id */
  id: string;
  name: string;
};

export type NotebookRenameOutput = {
  id: string;
  name: string;
  icon?: string;
  sort?: number;
  access?: "private" | "published";
  agent: "write" | "read" | "none";
  egress: "allowed" | "local-only";
};

export type NotebookSetAccessInput = {
  /** notebook id */
  id: string;
  access: "private" | "published";
};

export type NotebookSetAccessOutput = {
  id: string;
  name: string;
  icon?: string;
  sort?: number;
  access?: "private" | "published";
  agent: "write" | "read" | "none";
  egress: "allowed" | "local-only";
};

export type NotebookSetPrivacyInput = {
  /** notebook id */
  id: string;
  /** write (default): the agent reads and writes here, through the gate; read: every agent write is refused; none: nothing of the notebook reaches the agent through any tool */
  agent?: "write" | "read" | "none";
  /** allowed (default); local-only: its text never goes to a model, embedder or reranker that sends data off this machine */
  egress?: "allowed" | "local-only";
};

export type NotebookSetPrivacyOutput = {
  id: string;
  name: string;
  icon?: string;
  sort?: number;
  access?: "private" | "published";
  agent: "write" | "read" | "none";
  egress: "allowed" | "local-only";
};

export type OutlineGetInput = {
  /** document id, or any block in it */
  id: string;
};

export type OutlineGetOutput = {
  /** the document */
  id: string;
  outline: Array<{
    id: string;
    level: number;
    text: string;
    /** headings nested under it, each of this same shape */
    children: Array<{
      [key: string]: unknown;
    }>;
  }>;
};

export type RefBacklinksInput = {
  /** block id */
  id: string;
};

export type RefBacklinksOutput = {
  id: string;
  backlinks: Array<{
    id: string;
    type: string;
    subtype: string | null;
    documentId: string;
    notebook: string;
    hpath: string;
    /** the first 200 characters of its content */
    preview: string;
    updated: string | null;
    anchor: string | null;
  }>;
  /** more than 200 blocks refer to it */
  truncated: boolean;
};

export type RefForwardInput = {
  /** block or document id */
  id: string;
};

export type RefForwardOutput = {
  id: string;
  refs: Array<{
    /** the block holding the reference */
    fromId: string;
    /** the block referred to */
    id: string;
    anchor: string | null;
    /** null when unresolved */
    type: string | null;
    /** null when unresolved */
    documentId: string | null;
    /** null when unresolved */
    preview: string | null;
    /** whether the block referred to exists (and the caller may see it) */
    resolved: boolean;
  }>;
  /** more references than the 200 listed */
  truncated: boolean;
};

export type RerankRerankInput = {
  query: string;
  /** block ids, in the order to keep if the reranker cannot run */
  ids: string[];
};

export type RerankRerankOutput = {
  query: string;
  /** false when the given order was kept (no reranker, a failure, too few blocks); note says why */
  reranked: boolean;
  note?: string;
  model?: string;
  results: Array<{
    id: string;
    rank: number;
    /** absent when not reranked */
    score?: number;
  }>;
  /** ids that do not exist or that the caller may not see */
  missing: string[];
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
  /** how many of each arm's best hits are fused (default the larger of 50, pageSize and the reranker's candidates); keep it the same across the pages of one query, which are then one ranking */
  depth?: number;
};

export type SearchHybridOutput = {
  query: string;
  page: number;
  pageSize: number;
  total: number;
  /** each arm gave at most this many hits: there may be more matches than total */
  depth: number;
  fusion: {
    method: string;
    k: number;
  };
  arms: {
    fulltext: {
      ran: boolean;
      hits?: number;
      total?: number;
      /** why it did not run */
      reason?: string;
    };
    semantic: {
      ran: boolean;
      hits?: number;
      model?: string;
      complete?: boolean;
      exact?: boolean;
      /** why it did not run */
      reason?: string;
    };
    rerank: {
      ran: boolean;
      candidates?: number;
      model?: string;
      /** why it did not run */
      reason?: string;
    };
  };
  /** the semantic arm did not run: the answer is full-text search alone */
  fellBackToFulltext: boolean;
  note?: string;
  results: Array<{
    id: string;
    documentId: string;
    notebook: string;
    hpath: string;
    type: string;
    subtype: string | null;
    /** HTML-escaped text; matches inside <mark> */
    snippet: string;
    /** the fused score */
    score: number;
    rank: number;
    /** rank and score in each arm that found it */
    arms: {
      fulltext?: {
        rank: number;
        score: number;
      };
      semantic?: {
        rank: number;
        score: number;
      };
      rerank?: {
        rank: number;
        score: number;
      };
    };
  }>;
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
  /** the nearest 1,000 blocks are ranked: page × pageSize may be at most 1000 */
  page?: number;
  pageSize?: number;
};

export type SearchSemanticOutput = {
  query: string;
  page: number;
  pageSize: number;
  /** the model whose vectors answered */
  model: string;
  /** false while some blocks the filters allow have no current vector; note says why */
  complete: boolean;
  note?: string;
  /** exact search, not through the ANN index */
  exact: boolean;
  results: Array<{
    id: string;
    documentId: string;
    notebook: string;
    hpath: string;
    type: string;
    subtype: string | null;
    /** the start of the block's text */
    snippet: string;
    /** cosine similarity, higher is nearer */
    score: number;
    rank: number;
    arms: {
      semantic?: {
        rank: number;
        score: number;
      };
    };
  }>;
};

export type SkillInstallInput = {
  path: string;
  replace?: boolean;
  dryRun?: boolean;
};

export type SkillInstallOutput = {
  dryRun: true;
  /** dryRun: what would be written */
  wouldWrite: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
  }>;
  installed?: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
    replaced: boolean;
  }>;
  updatedBy?: string;
  /** files of the package that are no part of any skill */
  ignored: string[];
} | {
  dryRun?: true;
  /** dryRun: what would be written */
  wouldWrite?: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
  }>;
  installed: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
    replaced: boolean;
  }>;
  updatedBy: string;
  /** files of the package that are no part of any skill */
  ignored: string[];
};

export type SkillInstallUrlInput = {
  url: string;
  replace?: boolean;
  dryRun?: boolean;
};

export type SkillInstallUrlOutput = {
  dryRun: true;
  /** dryRun: what would be written */
  wouldWrite: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
  }>;
  installed?: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
    replaced: boolean;
  }>;
  updatedBy?: string;
  /** files of the package that are no part of any skill */
  ignored: string[];
} | {
  dryRun?: true;
  /** dryRun: what would be written */
  wouldWrite?: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
  }>;
  installed: Array<{
    name: string;
    /** where in the package it came from */
    from: string;
    folder: string;
    files: string[];
    bytes: number;
    /** a skill of this name exists */
    replaces: boolean;
    warnings: string[];
    replaced: boolean;
  }>;
  updatedBy: string;
  /** files of the package that are no part of any skill */
  ignored: string[];
};

export type SkillListInput = Record<string, never>;

export type SkillListOutput = {
  skills: Array<{
    name: string;
    description: string;
    /** relative to the workspace when inside it */
    folder: string;
    /** in <workspace>/skills (not a read-only folder of the config) */
    writable: boolean;
    /** its line in the system prompt */
    tokens: number;
    inPrompt: boolean;
    files: number;
    /** scripts it ships (never run here) */
    scripts: string[];
    warnings: string[];
    updatedBy?: string;
    lastUsed: string;
  }>;
  promptTokens: number;
  promptTokenBudget: number;
  leftOutOfPrompt: string[];
  broken: Array<{
    path: string;
    problem: string;
    message: string;
  }>;
};

export type SkillLoadInput = {
  name: string;
  file?: string;
};

export type SkillLoadOutput = {
  name: string;
  /** with file: its path */
  file: string;
  /** with file: its text */
  text: string;
  description?: string;
  /** the body of SKILL.md */
  body?: string;
  /** the other files of its folder */
  files?: string[];
  warnings?: string[];
} | {
  name: string;
  /** with file: its path */
  file?: string;
  /** with file: its text */
  text?: string;
  description: string;
  /** the body of SKILL.md */
  body: string;
  /** the other files of its folder */
  files: string[];
  warnings: string[];
};

export type SkillRemoveInput = {
  name: string;
};

export type SkillRemoveOutput = {
  removed: string;
  files: string[];
  /** the version kept of it */
  version?: string;
};

export type SkillRenameInput = {
  name: string;
  newName: string;
};

export type SkillRenameOutput = {
  /** the new name */
  name: string;
  from: string;
  files: number;
};

export type SkillRestoreVersionInput = {
  name: string;
  version: string;
};

export type SkillRestoreVersionOutput = {
  name: string;
  version: string;
  files: string[];
  replaced: boolean;
  warnings: string[];
  updatedBy?: string;
};

export type SkillSaveInput = {
  name: string;
  content: string;
  files?: {
    [key: string]: string | undefined;
  };
};

export type SkillSaveOutput = {
  name: string;
  written: string[];
  /** files of the replaced skill kept */
  kept: string[];
  replaced: boolean;
  warnings: string[];
  updatedBy: string;
};

export type SkillVersionsInput = {
  name?: string;
  version?: string;
};

export type SkillVersionsOutput = {
  /** without a name: the skills that have versions */
  skills: Array<{
    name: string;
    versions: number;
    latest: string;
  }>;
  name?: string;
  /** with a name: its versions, newest first */
  versions?: Array<{
    version: string;
    name: string;
    op: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
    by: string;
    time: string;
    description: string;
    files: string[];
    bytes: number;
  }>;
  version?: string;
  op?: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
  by?: string;
  time?: string;
  files?: Array<{
    path: string;
    bytes: number;
  }>;
  /** the text of its SKILL.md */
  skillMd?: string;
} | {
  /** without a name: the skills that have versions */
  skills?: Array<{
    name: string;
    versions: number;
    latest: string;
  }>;
  name: string;
  /** with a name: its versions, newest first */
  versions: Array<{
    version: string;
    name: string;
    op: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
    by: string;
    time: string;
    description: string;
    files: string[];
    bytes: number;
  }>;
  version?: string;
  op?: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
  by?: string;
  time?: string;
  files?: Array<{
    path: string;
    bytes: number;
  }>;
  /** the text of its SKILL.md */
  skillMd?: string;
} | {
  /** without a name: the skills that have versions */
  skills?: Array<{
    name: string;
    versions: number;
    latest: string;
  }>;
  name: string;
  /** with a name: its versions, newest first */
  versions?: Array<{
    version: string;
    name: string;
    op: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
    by: string;
    time: string;
    description: string;
    files: string[];
    bytes: number;
  }>;
  version: string;
  op: "save" | "install" | "rename" | "remove" | "restore" | "rollback";
  by: string;
  time: string;
  files: Array<{
    path: string;
    bytes: number;
  }>;
  /** the text of its SKILL.md */
  skillMd?: string;
};

export type SnapshotCreateInput = {
  memo?: string;
};

export type SnapshotCreateOutput = {
  id: string;
  memo: string;
  created: string;
  /** person:<name>, mcp:<name> or agent:<session>/<turn> */
  origin: string;
  /** the snapshot before it */
  parent: string | null;
  tags: string[];
  /** files of data/ it holds; for a caller who may not see every notebook, those in the notebooks it may see (null in a list, where only the whole count is at hand) */
  files: number | null;
  /** files of skills/ it holds */
  skillFiles?: number;
};

export type SnapshotDeleteInput = {
  ids: string[];
};

export type SnapshotDeleteOutput = {
  /** the snapshots deleted */
  deleted: string[];
};

export type SnapshotDiffInput = {
  from: string;
  to?: string;
};

export type SnapshotDiffOutput = {
  from: string;
  /** a snapshot id, or 'now' */
  to: string;
  added: string[];
  removed: string[];
  changed: string[];
  /** changed documents (at most 200): the blocks added, removed and changed */
  documents: Array<{
    path: string;
    blocks: {
      added: string[];
      removed: string[];
      changed: string[];
    };
  }>;
  /** skill files, when both sides hold skills */
  skills?: {
    added: string[];
    removed: string[];
    changed: string[];
  };
};

export type SnapshotGetInput = {
  id: string;
};

export type SnapshotGetOutput = {
  id: string;
  memo: string;
  created: string;
  /** person:<name>, mcp:<name> or agent:<session>/<turn> */
  origin: string;
  /** the snapshot before it */
  parent: string | null;
  tags: string[];
  /** data/-relative path → content */
  files: {
    [key: string]: {
      hash: string;
      size: number;
      mtimeMs: number;
    } | undefined;
  };
  /** skills/-relative path → content (absent in snapshots taken before skills were covered) */
  skills?: {
    [key: string]: {
      hash: string;
      size: number;
      mtimeMs: number;
    } | undefined;
  };
  auditHead?: {
    seq: number;
    hash: string;
  };
  scanStarted?: number;
};

export type SnapshotListInput = {
  /** snapshots in this page (default 200) */
  limit?: number;
  /** list the snapshots older than this one (the `next` of the page before) */
  before?: string;
  /** only snapshots whose origin starts with this, e.g. agent:<session>/ for one session's turns, or person: */
  origin?: string;
};

export type SnapshotListOutput = {
  snapshots: Array<{
    id: string;
    memo: string;
    created: string;
    /** person:<name>, mcp:<name> or agent:<session>/<turn> */
    origin: string;
    /** the snapshot before it */
    parent: string | null;
    tags: string[];
    /** files of data/ it holds; for a caller who may not see every notebook, those in the notebooks it may see (null in a list, where only the whole count is at hand) */
    files: number | null;
    /** files of skills/ it holds */
    skillFiles?: number;
  }>;
  /** more, older snapshots follow: pass this as `before` */
  next?: string;
  /** snapshots that match, on every page */
  total: number;
};

export type SnapshotPurgeInput = Record<string, never>;

export type SnapshotPurgeOutput = {
  /** objects removed */
  removed: number;
};

export type SnapshotRollbackInput = {
  id: string;
};

export type SnapshotRollbackOutput = {
  id: string;
  /** files brought back (in the snapshot, missing before) */
  added: string[];
  /** files created since the snapshot, removed */
  removed: string[];
  /** files restored to the snapshot's content */
  changed: string[];
  /** the same for skill files, when the snapshot holds skills */
  skills?: {
    added: string[];
    removed: string[];
    changed: string[];
  };
};

export type SnapshotTagInput = {
  id: string;
  tag: string;
};

export type SnapshotTagOutput = {
  id: string;
  memo: string;
  created: string;
  /** person:<name>, mcp:<name> or agent:<session>/<turn> */
  origin: string;
  /** the snapshot before it */
  parent: string | null;
  tags: string[];
  /** files of data/ it holds; for a caller who may not see every notebook, those in the notebooks it may see (null in a list, where only the whole count is at hand) */
  files: number | null;
  /** files of skills/ it holds */
  skillFiles?: number;
};

export type SnapshotUntagInput = {
  id: string;
  tag: string;
};

export type SnapshotUntagOutput = {
  id: string;
  memo: string;
  created: string;
  /** person:<name>, mcp:<name> or agent:<session>/<turn> */
  origin: string;
  /** the snapshot before it */
  parent: string | null;
  tags: string[];
  /** files of data/ it holds; for a caller who may not see every notebook, those in the notebooks it may see (null in a list, where only the whole count is at hand) */
  files: number | null;
  /** files of skills/ it holds */
  skillFiles?: number;
};

export type SnapshotVerifyInput = Record<string, never>;

export type SnapshotVerifyOutput = {
  snapshots: number;
  objects: number;
  damaged: Array<{
    object: string;
    reason: string;
  }>;
};

export type SqlQueryInput = {
  sql: string;
  limit?: number;
  timeoutMs?: number;
};

export type SqlQueryOutput = {
  columns: string[];
  rows: Array<unknown[]>;
  rowCount: number;
  /** there were more rows than returned (the limit, or the size of the answer) */
  truncated: boolean;
  /** some long cells were cut */
  cellsTruncated: boolean;
  limit: number;
  /** blocks whose ids appear in the rows */
  blocks: Array<{
    id: string;
    link: string;
  }>;
  /** the rows as a Markdown table */
  markdown: string;
};

export type SqlSchemaInput = Record<string, never>;

export type SqlSchemaOutput = {
  tables: Array<{
    name: string;
    description: string;
    columns: Array<{
      name: string;
      type: string;
      description: string;
    }>;
  }>;
};

export type SystemCurrentTimeInput = Record<string, never>;

export type SystemCurrentTimeOutput = {
  /** ISO 8601 */
  utc: string;
  /** IANA name of the local time zone */
  timeZone: string;
  /** YYYY-MM-DD hh:mm:ss in the local time zone */
  local: string;
  unixMs: number;
};

export type SystemInfoInput = Record<string, never>;

export type SystemInfoOutput = {
  version: string;
  startedAt: string;
  uptimeSeconds: number;
  /** the Node.js version */
  node: string;
};

export type TagBlocksInput = {
  /** the tag as tag_list lists it */
  tag: string;
  limit?: number;
};

export type TagBlocksOutput = {
  tag: string;
  blocks: Array<{
    id: string;
    type: string;
    subtype: string | null;
    documentId: string;
    notebook: string;
    hpath: string;
    /** the first 200 characters of its content */
    preview: string;
    updated: string | null;
  }>;
  truncated: boolean;
};

export type TagListInput = {
  prefix?: string;
};

export type TagListOutput = {
  tags: Array<{
    tag: string;
    blocks: number;
  }>;
  /** more tags than the 1,000 listed */
  truncated: boolean;
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
      result: AttrGetOutput;
    };
  };
  attr_set: {
    /** Set attributes on a block; a null value removes the attribute. */
    body: AttrSetInput;
    response: {
      result: AttrSetOutput;
    };
  };
  auditLog: {
    /** The audit log, newest first, filtered and in pages */
    query: { outcome?: "ok" | "error" | "refused" | "egress_denied"; plugin?: string; principal?: string; action?: string; before?: number; limit?: number };
    response: {
      records: AuditRecord[];
      /** before= for the next page; absent at the start of the log */
      next?: number;
    };
  };
  block_append: {
    /** Add blocks parsed from Markdown as the last children of a block or document. */
    body: BlockAppendInput;
    response: {
      result: BlockAppendOutput;
    };
  };
  block_batch_get: {
    /** Several blocks at once; ids that do not exist are listed as missing, and those whose document file is damaged as unreadable (with why). */
    body: BlockBatchGetInput;
    response: {
      result: BlockBatchGetOutput;
    };
  };
  block_delete: {
    /** Delete a block and its children. */
    body: BlockDeleteInput;
    response: {
      result: BlockDeleteOutput;
    };
  };
  block_get: {
    /** A block with its children and its Markdown. */
    body: BlockGetInput;
    response: {
      result: BlockGetOutput;
    };
  };
  block_get_children: {
    /** The direct children of a block, summarised: all of them, or `limit` from `offset` at a time (`next` the offset of the page after, null at the end; `total` how many there are). */
    body: BlockGetChildrenInput;
    response: {
      result: BlockGetChildrenOutput;
    };
  };
  block_insert: {
    /** Insert blocks parsed from Markdown after previousId, before nextId, or as the last children of parentId (give exactly one). */
    body: BlockInsertInput;
    response: {
      result: BlockInsertOutput;
    };
  };
  block_move: {
    /** Move a block after previousId, or to be the first child of parentId (give exactly one), in any document. */
    body: BlockMoveInput;
    response: {
      result: BlockMoveOutput;
    };
  };
  block_prepend: {
    /** Add blocks parsed from Markdown as the first children of a block or document. */
    body: BlockPrependInput;
    response: {
      result: BlockPrependOutput;
    };
  };
  block_update: {
    /** Replace a block's content with Markdown; the block keeps its id and attributes, and so do the blocks inside it that are still there (unchanged ones as they were, changed ones of the same kind at the s */
    body: BlockUpdateInput;
    response: {
      result: BlockUpdateOutput;
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
    query: { turn?: string };
    response: {
      cancelled: boolean;
      turnID?: string;
      running?: {
        [key: string]: unknown;
      };
      /** Why nothing was cancelled: a rollback holds the session (it is not stopped), or another turn runs */
      reason?: "rollback" | "another_turn";
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
      result: DailynoteAppendOutput;
    };
  };
  dailynote_get: {
    /** The daily note of a date (today by default), if it exists. */
    body: DailynoteGetInput;
    response: {
      result: DailynoteGetOutput;
    };
  };
  dailynote_prepend: {
    /** Add Markdown at the start of a day's note, creating the note if needed. */
    body: DailynotePrependInput;
    response: {
      result: DailynotePrependOutput;
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
      result: DocumentDuplicateOutput;
    };
  };
  document_get: {
    /** A document's whole block tree. */
    body: DocumentGetInput;
    response: {
      result: DocumentGetOutput;
    };
  };
  document_get_markdown: {
    /** A document's content as Markdown, whole, or a part of it at a time: `limit` characters from `offset` (a part ends at a line end where one is near), `next` the offset of the part after, null at the end */
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
      result: DocumentMoveOutput;
    };
  };
  document_remove: {
    /** Remove a document and every document below it. */
    body: DocumentRemoveInput;
    response: {
      result: DocumentRemoveOutput;
    };
  };
  document_rename: {
    /** Change a document's title. */
    body: DocumentRenameInput;
    response: {
      result: DocumentRenameOutput;
    };
  };
  embeddings_index: {
    /** Embed every block that is pending now and wait until each is embedded or has failed, reporting progress; optionally everything again (reindex) or the failed ones too (retryFailed). */
    body: EmbeddingsIndexInput;
    response: {
      result: EmbeddingsIndexOutput;
    } | {
      job: Job;
    };
  };
  embeddings_reindex: {
    /** Embed every block again (in the background); the old vectors answer until replaced. */
    body: EmbeddingsReindexInput;
    response: {
      result: EmbeddingsReindexOutput;
    };
  };
  embeddings_retry_failed: {
    /** Retry the blocks whose embedding failed, now (in the background). */
    body: EmbeddingsRetryFailedInput;
    response: {
      result: EmbeddingsRetryFailedOutput;
    };
  };
  embeddings_status: {
    /** How far the embedding of the notes has come: total, indexed, pending, failed, ignored (by reason), the model, the last error, throughput. */
    body: EmbeddingsStatusInput;
    response: {
      result: EmbeddingsStatusOutput;
    };
  };
  export_markdown: {
    /** Write a notebook or a document (with the documents below it) as .md files into a folder; flavor obsidian writes front matter, [[wiki links]], #tags and callouts as Obsidian reads them, with attachment */
    body: ExportMarkdownInput;
    response: {
      result: ExportMarkdownOutput;
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
  getAsset: {
    /** A workspace attachment (assets/<name>: a note's image or file) */
    params: { name: string };
    response: string;
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
    query: { entriesFrom?: number; revision?: number; tail?: number };
    response: {
      session: Session;
      entriesFrom?: number;
      entryCount?: number;
      /** The agent's task list as it stands, when the entries answered start after the first */
      todos?: Array<{
        content: string;
        status: "pending" | "in_progress" | "completed" | "cancelled";
      }>;
    };
  };
  health: {
    /** Whether the kernel answers, and its version */
    query: { challenge?: string };
    response: {
      ok: boolean;
      version: string;
      /** this boot of the kernel (serve.json names it) */
      instance: string;
      /** HMAC-SHA256 of the challenge under the boot key serve.json holds, base64url (only when challenged) */
      proof?: string;
    };
  };
  history_clear: {
    /** Delete the versions of one document, or of all documents. */
    body: HistoryClearInput;
    response: {
      result: HistoryClearOutput;
    } | {
      job: Job;
    };
  };
  history_get: {
    /** One version of a document, with its full content. */
    body: HistoryGetInput;
    response: {
      result: HistoryGetOutput;
    };
  };
  history_list: {
    /** The versions of a document, newest first: when, what happened (update, move, remove, rollback) and who did it. */
    body: HistoryListInput;
    response: {
      result: HistoryListOutput;
    };
  };
  history_rollback: {
    /** Restore a document to one of its versions (also a removed document); the current state is kept as a version first. */
    body: HistoryRollbackInput;
    response: {
      result: HistoryRollbackOutput;
    };
  };
  history_search: {
    /** Versions by text, notebook, operation or time range, newest documents first. */
    body: HistorySearchInput;
    response: {
      result: HistorySearchOutput;
    };
  };
  import_markdown: {
    /** Import a .md file or a folder of them (folders become documents holding their contents); a note's front matter becomes its attributes, the local files its links name (inside the folder) are copied int */
    body: ImportMarkdownInput;
    response: {
      result: ImportMarkdownOutput;
    } | {
      job: Job;
    };
  };
  index_problems: {
    /** Files skipped because they are not valid documents or notebooks, with the reason. */
    body: IndexProblemsInput;
    response: {
      result: IndexProblemsOutput;
    };
  };
  index_rebuild: {
    /** Rebuild the index from the document files (they are not changed). */
    body: IndexRebuildInput;
    response: {
      result: IndexRebuildOutput;
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
    /** Long actions, running and ended, newest first, in pages */
    query: { state?: "running" | "ended"; before?: string; limit?: number; results?: "true" | "false" };
    response: {
      jobs: Job[];
      /** before= for the next page; absent on the last */
      next?: string;
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
    } | unknown[];
    response: string;
  };
  me: {
    /** Who this token is: its name and role */
    response: {
      kind: string;
      name: string;
      role: "admin" | "reader";
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
      result: NotebookRemoveOutput;
    } | {
      job: Job;
    };
  };
  notebook_rename: {
    /** Rename a notebook. */
    body: NotebookRenameInput;
    response: {
      result: NotebookRenameOutput;
    };
  };
  notebook_set_access: {
    /** Make a notebook private or published (readable by reader tokens). */
    body: NotebookSetAccessInput;
    response: {
      result: NotebookSetAccessOutput;
    };
  };
  notebook_set_privacy: {
    /** Set what the agent may do in a notebook and whether its text may leave this machine. */
    body: NotebookSetPrivacyInput;
    response: {
      result: NotebookSetPrivacyOutput;
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
      result: OutlineGetOutput;
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
      result: RefBacklinksOutput;
    };
  };
  ref_forward: {
    /** The references made by a block, or by every block of a document, and whether each still resolves. */
    body: RefForwardInput;
    response: {
      result: RefForwardOutput;
    };
  };
  rerank_rerank: {
    /** Orders the given blocks by the reranker's judgement of how well each answers the query (best first, with its score). */
    body: RerankRerankInput;
    response: {
      result: RerankRerankOutput;
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
      /** restore: the turn's snapshot put back whole; blocks: only the blocks it changed */
      mode: "restore" | "blocks";
      /** blocks changed since by someone else, left as they are unless force */
      conflicts: Array<{
        path: string;
        id?: string;
      }>;
      undone?: unknown[];
    };
  };
  saveSession: {
    /** Save a session at a revision (409 with the current one on a conflict) */
    params: { id: string };
    body: {
      /** The whole history; left out, the stored one is kept (a rename). */
      entries?: Array<{
        id: string;
        type: "user" | "thinking" | "assistant" | "confirm" | "question" | "snapshot" | "rollback";
        content?: string;
        toolCalls?: Array<{
          id: string;
          name: string;
          result?: string;
          state?: "pending" | "executing" | "finished" | "unknown" | "skipped";
        }>;
        timestamp?: string;
      }>;
      expectedRevision?: number;
      commitTurnID?: string;
      title?: string;
      createdAt?: string;
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
      result: SearchHybridOutput;
    };
  };
  search_semantic: {
    /** Semantic search: the blocks nearest in meaning to the query (by the configured embedder's vectors), with the same filters as full-text search. */
    body: SearchSemanticInput;
    response: {
      result: SearchSemanticOutput;
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
      result: SkillInstallOutput;
    };
  };
  skill_install_url: {
    /** Install skills from a .zip / .tar.gz archive or a single SKILL.md downloaded from an http(s) URL, with the same checks as install; all or nothing, the answer lists every file written. */
    body: SkillInstallUrlInput;
    response: {
      result: SkillInstallUrlOutput;
    };
  };
  skill_list: {
    /** Every skill: name, description, where it lives, its token cost in the prompt and whether it is listed there, warnings (such as scripts it ships, which are never run here), and the broken ones with the */
    body: SkillListInput;
    response: {
      result: SkillListOutput;
    };
  };
  skill_load: {
    /** Read a skill's instructions (the body of its SKILL.md), or with `file` one file of its folder (a path relative to the folder, such as references/guide.md). */
    body: SkillLoadInput;
    response: {
      result: SkillLoadOutput;
    };
  };
  skill_remove: {
    /** Remove a skill of the workspace, its whole folder. */
    body: SkillRemoveInput;
    response: {
      result: SkillRemoveOutput;
    };
  };
  skill_rename: {
    /** Rename a skill of the workspace: its folder and the name in its SKILL.md. */
    body: SkillRenameInput;
    response: {
      result: SkillRenameOutput;
    };
  };
  skill_restore_version: {
    /** Put a kept version back as the skill's whole folder (also of a removed skill); the skill as it is now is kept as a version first. */
    body: SkillRestoreVersionInput;
    response: {
      result: SkillRestoreVersionOutput;
    };
  };
  skill_save: {
    /** Create a skill, or replace the SKILL.md (and the files given) of one in the workspace. */
    body: SkillSaveInput;
    response: {
      result: SkillSaveOutput;
    };
  };
  skill_versions: {
    /** Earlier versions of a skill, newest first: kept before each save that replaced it, rename, removal, install over it, restore or snapshot rollback (when, what, who, its files). */
    body: SkillVersionsInput;
    response: {
      result: SkillVersionsOutput;
    };
  };
  snapshot_create: {
    /** Take a snapshot of all notes and skills. */
    body: SnapshotCreateInput;
    response: {
      result: SnapshotCreateOutput;
    } | {
      job: Job;
    };
  };
  snapshot_delete: {
    /** Delete snapshots. */
    body: SnapshotDeleteInput;
    response: {
      result: SnapshotDeleteOutput;
    };
  };
  snapshot_diff: {
    /** Files added, removed and changed between two snapshots, or a snapshot and now; for changed documents, the blocks added, removed and changed; `skills` lists skill files added, removed and changed when  */
    body: SnapshotDiffInput;
    response: {
      result: SnapshotDiffOutput;
    };
  };
  snapshot_get: {
    /** One snapshot with its table of files. */
    body: SnapshotGetInput;
    response: {
      result: SnapshotGetOutput;
    };
  };
  snapshot_list: {
    /** Snapshots, newest first: id, memo, time, origin (a person or agent:<session>/<turn>), tags. */
    body: SnapshotListInput;
    response: {
      result: SnapshotListOutput;
    };
  };
  snapshot_purge: {
    /** Delete stored file contents that no snapshot refers to. */
    body: SnapshotPurgeInput;
    response: {
      result: SnapshotPurgeOutput;
    };
  };
  snapshot_rollback: {
    /** Make the notes and skills exactly as they were in a snapshot: files created since are removed, changed ones restored, and the index updated. */
    body: SnapshotRollbackInput;
    response: {
      result: SnapshotRollbackOutput;
    } | {
      job: Job;
    };
  };
  snapshot_tag: {
    /** Add a tag to a snapshot. */
    body: SnapshotTagInput;
    response: {
      result: SnapshotTagOutput;
    };
  };
  snapshot_untag: {
    /** Remove a tag from a snapshot (a tagged snapshot is kept from deletion and from the retention). */
    body: SnapshotUntagInput;
    response: {
      result: SnapshotUntagOutput;
    };
  };
  snapshot_verify: {
    /** Read every stored object again and report any that is missing or damaged. */
    body: SnapshotVerifyInput;
    response: {
      result: SnapshotVerifyOutput;
    };
  };
  sql_query: {
    /** Run one SELECT or WITH statement on the index (read-only). */
    body: SqlQueryInput;
    response: {
      result: SqlQueryOutput;
    };
  };
  sql_schema: {
    /** The tables of the index, their columns, and what each column means. */
    body: SqlSchemaInput;
    response: {
      result: SqlSchemaOutput;
    };
  };
  startTurn: {
    /** Send the person's message; the turn streams back */
    params: { id: string };
    body: {
      message: string;
      /** the client's id for this message: sent again (a retry after the connection dropped), it is refused with 409 (reason duplicate) instead of run as a second turn */
      messageId?: string;
    };
    response: string;
  };
  system_current_time: {
    /** The current date and time, in UTC and in the kernel's local time zone. */
    body: SystemCurrentTimeInput;
    response: {
      result: SystemCurrentTimeOutput;
    };
  };
  system_info: {
    /** The kernel version, when it started, and how long it has been running. */
    body: SystemInfoInput;
    response: {
      result: SystemInfoOutput;
    };
  };
  tag_blocks: {
    /** Blocks carrying a tag (or one nested under it), most recently updated first. */
    body: TagBlocksInput;
    response: {
      result: TagBlocksOutput;
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
  verifyAudit: {
    /** Walk the whole chain: whether and where it was altered */
    response: {
      verification: {
        ok: boolean;
        lines: number;
        line?: number;
        reason?: string;
      };
    };
  };
  webApp: {
    /** The web app */
    response: string;
  };
  webAppAsset: {
    /** The web app's scripts and styles (hashed names, cached for good) */
    params: { file: string };
    response: string;
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
  auditLog: { method: 'GET', path: '/api/audit' },
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
  getAsset: { method: 'GET', path: '/api/assets/{name}' },
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
  me: { method: 'GET', path: '/api/me' },
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
  snapshot_delete: { method: 'POST', path: '/api/actions/snapshots/snapshot/delete' },
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
  verifyAudit: { method: 'POST', path: '/api/audit/verify' },
  webApp: { method: 'GET', path: '/' },
  webAppAsset: { method: 'GET', path: '/app/assets/{file}' },
} as const;
