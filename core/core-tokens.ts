import { createToken } from './tokens.js';
import type { Workspace } from './workspace.js';
import type { KernelConfig } from './config/kernel-config.js';
import type { Logger } from './log.js';
import type { AuditLog } from './audit/audit-log.js';
import type { GrantsStore } from './gate/grants-store.js';
import type { ConfirmationStore } from './gate/confirmation-store.js';
import type { ActionRegistry } from './registry/action-registry.js';
import type { BackendRegistry } from './backends/backend-registry.js';
import type { ActionPipeline } from './pipeline/action-pipeline.js';
import type { PluginHost } from './plugins/plugin-host.js';
import type { Authenticator } from './auth/authenticator.js';
import type { DependencyContainer } from './di.js';
import type { FileSessionStore } from './session/session-store.js';
import type { TodoItem } from './session/session-types.js';
import type { JobManager } from './jobs/job-manager.js';

/** Kernel information a plugin may read. */
export interface KernelInfo {
  version: string;
  startedAt: string;
}

export const WORKSPACE = createToken<Workspace>('core.workspace');
export const KERNEL_INFO = createToken<KernelInfo>('core.kernel-info');
export const KERNEL_CONFIG = createToken<KernelConfig>('core.config');
export const LOGGER = createToken<Logger>('core.logger');
export const AUDIT_LOG = createToken<AuditLog>('core.audit-log');
export const GRANTS_STORE = createToken<GrantsStore>('core.grants');
export const CONFIRMATION_STORE = createToken<ConfirmationStore>('core.confirmations');
export const BACKEND_REGISTRY = createToken<BackendRegistry>('core.backend-registry');
export const ACTION_REGISTRY = createToken<ActionRegistry>('core.action-registry');
export const ACTION_PIPELINE = createToken<ActionPipeline>('core.action-pipeline');
export const PLUGIN_HOST = createToken<PluginHost>('core.plugin-host');
export const AUTHENTICATOR = createToken<Authenticator>('core.authenticator');
export const JOB_MANAGER = createToken<JobManager>('core.jobs');
/** The environment tokens may be read from (`auth.tokens[].env`); a token so tests can give their own. */
export const PROCESS_ENV = createToken<NodeJS.ProcessEnv>('core.process-env');

/**
 * The core services a plugin may `require`. The rest (grants, confirmations, audit, the pipeline) stay
 * out of plugins' reach: a plugin that could write grants could approve its own actions.
 */
/** A session's task list, for the todo plugin: read and replace, nothing else of the session. */
export interface SessionTodos {
  read(sessionId: string): Promise<TodoItem[]>;
  write(sessionId: string, todos: readonly TodoItem[]): Promise<void>;
}
export const SESSION_TODOS = createToken<SessionTodos>('core.session-todos');

/**
 * Where the audit log ends (its last durable line's seq and hash), read-only: the snapshots plugin
 * records it in every snapshot, so that a log rewritten later no longer matches what was anchored.
 */
export interface AuditHeadReader {
  current(): { seq: number; hash: string };
}
export const AUDIT_HEAD = createToken<AuditHeadReader>('core.audit-head');

export const PLUGIN_VISIBLE_CORE_TOKENS: ReadonlySet<symbol> = new Set([WORKSPACE, KERNEL_INFO, SESSION_TODOS, AUDIT_HEAD]);

/** The kernel's own container: for the core services that look up what plugins provide. */
export const KERNEL_CONTAINER = createToken<DependencyContainer>('core.container');

/** The agent's sessions (REFERENCE.md §4). */
export const SESSION_STORE = createToken<FileSessionStore>('core.sessions');
