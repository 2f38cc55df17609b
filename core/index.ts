/**
 * The only module plugins import. Named exports only; no logic lives here.
 */
export { definePlugin, ALL_EFFECTS } from './plugin-api.js';
export type {
  ActionCall, ActionHandler, ActionManifest, Effect, JsonSchema, PluginContext, PluginDefinition, PluginHandlers,
  PluginManifest, PluginSource, Principal, ProgressUpdate, Role, StopReason, ToolManifest,
} from './plugin-api.js';
export type { Embedder, Reranker, BackendKind, BackendHandle, BackendCaller, SelectedBackend } from './backends/contracts.js';
export { throwIfStopped, stoppedNote } from './pipeline/stop.js';
export { sweepRetention } from './util/retention-sweep.js';
export { withTimeout } from './util/with-timeout.js';
export { createToken, tokenName } from './tokens.js';
export type { Token } from './tokens.js';
export { WORKSPACE, KERNEL_INFO, SESSION_TODOS, AUDIT_HEAD } from './core-tokens.js';
export { SKILLS_LISTING, skillLine, skillLineTokens } from './turn/skills-listing.js';
export type { SkillListing, SkillsListingSource } from './turn/skills-listing.js';
export type { KernelInfo, SessionTodos, AuditHeadReader } from './core-tokens.js';
export type { TodoItem } from './session/session-types.js';
export type { Workspace } from './workspace.js';
export type { Logger, LogFields } from './log.js';
export { KernelError, PluginError, ConflictError, NotFoundError, CapabilityError, isKernelError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { newId, isValidId, claimIds } from './ids.js';
export { NOTEBOOK_SCOPE } from './gate/notebook-scope.js';
export type { AgentLimit, NotebookPrivacy, NotebookScope, ScopedCall } from './gate/notebook-scope.js';
export { copyFileAtomic, linkOrCopyExclusive, replaceFile, syncFolder, writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from './fs/atomic-write.js';
export { describeWrite, diskFull, isDiskFull } from './fs/disk-full.js';
export type { DiskWrite } from './fs/disk-full.js';
export { IntentJournal, makeFolderDurably } from './fs/intent-journal.js';
export { pathExists } from './fs/path-exists.js';
export { settledMtime } from './fs/settled-mtime.js';
export { firstCodePoints, firstUtf8Bytes, wholeCharacterEnd } from './util/code-points.js';
export { escapeHtml } from './util/escape-html.js';
export { compiledScript, startWorker } from './util/worker-exec-argv.js';
export { WorkerPool } from './util/worker-pool.js';
export type { WorkerPoolOptions } from './util/worker-pool.js';
export { mayRead, mayReadRemoved, readableNotebooks, readsAreScoped } from './gate/read-scope.js';
export type { ReadCaller, ReadableNotebook } from './gate/read-scope.js';
export { localOnlyAmong } from './gate/egress-scope.js';
export type { PendingIntent } from './fs/intent-journal.js';
