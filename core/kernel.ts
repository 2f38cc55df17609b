import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { DependencyContainer } from './di.js';
import { createKernelContainer } from './container.js';
import {
  ACTION_PIPELINE, ACTION_REGISTRY, AUDIT_LOG, BACKEND_REGISTRY, AUTHENTICATOR, PROCESS_ENV, CONFIRMATION_STORE, GRANTS_STORE, KERNEL_CONFIG, KERNEL_INFO, LOGGER,
  PLUGIN_HOST, WORKSPACE, KERNEL_CONTAINER, SESSION_STORE, SESSION_TODOS, JOB_MANAGER, AUDIT_HEAD, type KernelInfo,
} from './core-tokens.js';
import { readKernelConfigFile, withDefaults, type KernelConfig, type KernelConfigFile } from './config/kernel-config.js';
import { backendProblem, findConfigProblems, logConfigProblems, modelUnavailable, snapshotsMissing, type ConfigProblem } from './config/config-problems.js';
import { SNAPSHOT_SERVICE } from './turn/snapshot-service.js';
import { MODEL_PROVIDER } from './turn/model-provider-token.js';
import type { ModelProvider } from './turn/model-provider.js';
import { AuditLog } from './audit/audit-log.js';
import { ensureAdminToken, type GeneratedToken } from './auth/admin-token.js';
import { Authenticator } from './auth/authenticator.js';
import { installEgressGuard } from './egress/egress-guard.js';
import { ConfirmationStore } from './gate/confirmation-store.js';
import { FileGrantsStore } from './gate/grants-store.js';
import { createLogger, type Logger } from './log.js';
import { CODE_ROOT, KERNEL_VERSION, NATIVE_MANIFESTS_DIR } from './paths.js';
import { ActionPipeline } from './pipeline/action-pipeline.js';
import { PLUGIN_HOST_OPTIONS, PluginHost } from './plugins/plugin-host.js';
import { ActionRegistry } from './registry/action-registry.js';
import { BackendRegistry } from './backends/backend-registry.js';
import { openWorkspace, type Workspace } from './workspace.js';
import { acquireWorkspaceLock, type WorkspaceLock } from './workspace-lock.js';
import { FileSessionStore } from './session/session-store.js';
import { ExternalMcpServers } from './mcp/client/external-servers.js';
import { ToolPins } from './mcp/client/tool-pins.js';
import { TurnRunner } from './turn/turn-runner.js';
import type { TodoItem } from './session/session-types.js';
import { JobManager } from './jobs/job-manager.js';
import { join } from 'node:path';
import { UsageLedger } from './usage/usage-ledger.js';
import { countText } from './turn/compaction-tokens.js';
import { readPrecompiledAhead } from './schema/precompiled.js';

const GENERATED_TOKEN = Symbol('quire.generatedAdminToken');

/** The admin token a start that then failed had generated (to show it: no later start will). */
export function tokenGeneratedBy(failure: unknown): GeneratedToken | undefined {
  return typeof failure === 'object' && failure !== null ? (failure as { [GENERATED_TOKEN]?: GeneratedToken })[GENERATED_TOKEN] : undefined;
}

export interface KernelOptions {
  /** The workspace folder; created if absent. */
  workspace: string;
  /** Use this configuration instead of reading `<workspace>/quire.json` (tests). */
  config?: KernelConfigFile;
  /** Folder of native manifests; defaults to the package's `manifests/`. */
  nativeManifestsDir?: string;
  /** Root the native manifests' entries resolve against; defaults to the code root. */
  codeRoot?: string;
  /** Where `auth.tokens[].env` entries are read; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Create an admin token on first start (what `quire serve` does). */
  generateAdminToken?: boolean;
  logger?: Logger;
  /** How often the workspace lock is touched (workspace-lock.ts; tests). */
  lockHeartbeatMs?: number;
}

/**
 * One kernel over one workspace: its own DI container, stores, registry and plugins.
 * Boot: open the workspace → read config → open the stores → load, order and activate plugins.
 */
export class Kernel {
  private closed = false;
  private lock: WorkspaceLock | undefined;
  /**
   * Resolves, naming the new holder, if the workspace lock stops being this kernel's (another host's
   * kernel took it over after this one missed its heartbeats, or the file was removed). The kernel then
   * refuses every call and its close writes nothing (no session, audit or usage flush: the workspace is
   * another kernel's now, and every acknowledged write is already durable); `quire serve`, `quire mcp`
   * and the CLI's other commands exit at once. Work already under way in an embedding process cannot be
   * stopped from here.
   */
  lockLost: Promise<string> = new Promise<string>(() => undefined);
  private lost = false;
  readonly registry: ActionRegistry;
  /** The embedders and rerankers plugins offer, and which of each kind is selected. */
  readonly backends: BackendRegistry;
  readonly pipeline: ActionPipeline;
  readonly plugins: PluginHost;
  readonly grants: FileGrantsStore;
  readonly confirmations: ConfirmationStore;
  readonly audit: AuditLog;
  readonly log: Logger;
  readonly authenticator: Authenticator;
  readonly sessions: FileSessionStore;
  readonly turns: TurnRunner;
  /** Long work (import, rebuild, snapshots…) with progress, cancellation and durable records. */
  readonly jobs: JobManager;
  /** External MCP servers whose tools are registered as actions (quire.json `mcp.servers`). */
  readonly externalMcp: ExternalMcpServers;
  /** Every model and embedding request's usage (`.quire/usage.db`), priced from quire.json's usage.prices. */
  readonly usage: UsageLedger;
  /**
   * This boot's own id: a serving kernel records it in serve.json and answers it on /healthz, so that a
   * client finds this kernel, not whatever now listens where a crashed one did.
   */
  readonly instance = randomUUID();
  /**
   * This boot's secret, written only to serve.json (mode 0600): /healthz proves it holds it by answering
   * a client's challenge with an HMAC of it. The instance id alone is public (/healthz answers it to
   * anyone), so a process listening where a crashed kernel did could replay it and get the token.
   */
  readonly instanceKey = randomBytes(32).toString('base64url');

  /** The proof of this boot for a client's challenge (see `instanceKey`). */
  proveInstance(challenge: string): string {
    return instanceProof(this.instanceKey, challenge);
  }

  private constructor(
    readonly container: DependencyContainer,
    readonly workspace: Workspace,
    readonly config: KernelConfig,
    /** The admin token created by this boot, to be shown once; undefined when one already existed. */
    readonly generatedAdminToken: GeneratedToken | undefined,
  ) {
    this.registry = container.resolve<ActionRegistry>(ACTION_REGISTRY);
    this.backends = container.resolve<BackendRegistry>(BACKEND_REGISTRY);
    this.pipeline = container.resolve<ActionPipeline>(ACTION_PIPELINE);
    this.plugins = container.resolve<PluginHost>(PLUGIN_HOST);
    this.grants = container.resolve<FileGrantsStore>(GRANTS_STORE);
    this.confirmations = container.resolve<ConfirmationStore>(CONFIRMATION_STORE);
    this.audit = container.resolve<AuditLog>(AUDIT_LOG);
    this.log = container.resolve<Logger>(LOGGER);
    this.authenticator = container.resolve<Authenticator>(AUTHENTICATOR);
    this.sessions = container.resolve<FileSessionStore>(SESSION_STORE);
    this.jobs = container.resolve<JobManager>(JOB_MANAGER);
    this.usage = new UsageLedger(join(workspace.privateDir, 'usage.db'), () => config.usage.prices,
      (error) => this.log.warn('the usage ledger could not be synced to disk', { error: error instanceof Error ? error.message : String(error) }));
    const usage = this.usage;
    // Embedders and rerankers report no usage through their contract: their input is counted here (estimated).
    this.backends.onUse((use) => {
      try {
        usage.record({
          kind: use.kind === 'embedder' ? 'embedding' : 'rerank', provider: `${use.plugin}/${use.name}`, model: use.model,
          ...(use.sessionId !== undefined ? { sessionId: use.sessionId } : {}), ...(use.turnId !== undefined ? { turnId: use.turnId } : {}),
          input: use.texts.reduce((sum, text) => sum + countText(text, false), 0), cachedInput: 0, output: 0, reasoning: 0, estimated: true,
        });
      } catch (error) {
        this.log.warn('usage not recorded', { error: error instanceof Error ? error.message : String(error) });
      }
    });
    this.turns = new TurnRunner(this);
    this.externalMcp = new ExternalMcpServers(config, this.registry, new ToolPins(workspace.privateDir), this.grants, container.resolve<NodeJS.ProcessEnv>(PROCESS_ENV), this.log.child('mcp'));
    const sessions = this.sessions;
    container.registerInstance(SESSION_TODOS, { read: (id: string) => sessions.readTodos(id), write: (id: string, todos: readonly TodoItem[]) => sessions.writeTodos(id, todos) });
    const audit = this.audit;
    container.registerInstance(AUDIT_HEAD, { current: () => audit.currentHead() });
  }

  static async boot(options: KernelOptions): Promise<Kernel> {
    const workspace = await openWorkspace(options.workspace);
    let lost!: (holder: string) => void;
    const lockLost = new Promise<string>((resolve) => { lost = resolve; });
    const lock = await acquireWorkspaceLock(workspace.privateDir, { heartbeatMs: options.lockHeartbeatMs, onLost: (holder) => lost(holder) });
    try {
      const kernel = await Kernel.bootLocked(workspace, lock, options);
      kernel.lockLost = lockLost;
      void lockLost.then((holder) => {
        kernel.lost = true;
        kernel.pipeline.fence(holder);
        kernel.log.error('the workspace lock is no longer this kernel\'s: it refuses every call and writes nothing more', { file: lock.file, holder });
      });
      return kernel;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  private static async bootLocked(workspace: Workspace, lock: WorkspaceLock, options: KernelOptions): Promise<Kernel> {
    const file = options.config ?? await readKernelConfigFile(workspace.configFile);
    const generated = options.generateAdminToken && !options.config ? await ensureAdminToken(workspace, file) : undefined;
    try {
      return await Kernel.start(workspace, lock, options, generated ? await readKernelConfigFile(workspace.configFile) : file, generated);
    } catch (error) {
      // A token made by this start (its hash is in quire.json now) goes with the failure, whatever failed:
      // the next start finds a token configured and makes none, so it would never be shown.
      const failure = typeof error === 'object' && error !== null ? error : new Error(String(error));
      if (generated) Object.assign(failure, { [GENERATED_TOKEN]: generated });
      throw failure;
    }
  }

  private static async start(workspace: Workspace, lock: WorkspaceLock, options: KernelOptions, file: KernelConfigFile, generated: GeneratedToken | undefined): Promise<Kernel> {
    const config = withDefaults(file);
    const container = createKernelContainer();
    registerCore(container, workspace, config, options);
    const kernel = new Kernel(container, workspace, config, generated);
    kernel.lock = lock;
    try {
      await kernel.grants.load();
      await kernel.confirmations.load();
      await kernel.audit.open();
      await kernel.jobs.load();
      installEgressGuard();
      await kernel.plugins.start();
      // After the plugins: an external tool whose wire name a plugin holds is refused; a failing server is reported, not fatal.
      await kernel.externalMcp.start();
      logConfigProblems(kernel.log, kernel.configProblems());
      // In the background: the first call of each action then finds its validator in memory.
      void readPrecompiledAhead();
    } catch (error) {
      // The boot's own failure is what the caller needs: a failure to close after it is logged, not thrown in its place.
      await kernel.close().catch((closing: unknown) => kernel.log.error('the kernel could not close after a failed start', { error: String((closing as Error)?.message ?? closing) }));
      throw error;
    }
    return kernel;
  }

  /**
   * Mistakes that do not stop a start but leave configuration doing nothing: names in quire.json or
   * grants.json that match no plugin, tool or action, token variables that are unset. Logged at start;
   * computed again on each call, so a listing shows the grants as they are now.
   */
  configProblems(): ConfigProblem[] {
    // A connected external server's tools, by action and by their own names (a deny rule may use either).
    const externalActions = new Map<string, Set<string>>();
    // Tools waiting for approval or refused count too: a rule may be written for one before it is offered.
    for (const server of this.externalMcp.describe()) {
      if (server.state === 'connected') externalActions.set(`mcp-${server.name}`, new Set([...server.tools, ...server.pending, ...server.refused].map((tool) => tool.name)));
    }
    for (const action of this.registry.list()) {
      const names = action.source === 'mcp' ? externalActions.get(action.pluginId) : undefined;
      names?.add(action.action);
      if (action.externalName !== undefined) names?.add(action.externalName);
    }
    return [
      ...findConfigProblems({ config: this.config, records: this.plugins.getCatalog()?.all ?? [], grants: this.grants.list(), env: this.container.resolve<NodeJS.ProcessEnv>(PROCESS_ENV), externalActions }),
      ...this.backends.selectionProblems().map((found) => backendProblem(found.field, found.message)),
      ...this.modelProblems(),
      // The snapshots plugin turned off: every agent write would fail at the turn's first snapshot, and nothing said why until then.
      ...(this.config.agent.requireSnapshot !== false && !this.container.isRegistered(SNAPSHOT_SERVICE, true)
        && (this.plugins.getCatalog()?.all ?? []).some((record) => (record.ok ? record.compiled.manifest.id : record.id) === 'snapshots') ? [snapshotsMissing()] : []),
    ];
  }

  /** The configured model, when it cannot be used at all (a plugin other than providers may offer it). */
  private modelProblems(): ConfigProblem[] {
    if (!this.container.isRegistered(MODEL_PROVIDER, true)) return [];
    const unavailable = this.container.resolve<ModelProvider>(MODEL_PROVIDER).unavailable;
    return unavailable ? [modelUnavailable(unavailable.message, unavailable.field)] : [];
  }

  private readonly closers: (() => Promise<void>)[] = [];

  /** Work to do when the kernel closes, before its plugins are disposed (surfaces built on it: MCP sessions). */
  onClose(closer: () => Promise<void>): void {
    this.closers.push(closer);
  }

  /** Disposes plugins in reverse order, then closes the stores. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The workspace is another kernel's: nothing is flushed into it (see lockLost).
    if (this.lost) return;
    for (const closer of this.closers.splice(0).reverse()) await closer().catch(() => undefined);
    // Running turns stop and save how they ended before anything they use goes away.
    await this.turns.close(this.config.actions.stopGraceMs).catch(() => undefined);
    // Running jobs stop at their next safe point before the plugins that run them go away.
    await this.jobs.close(this.config.actions.stopGraceMs).catch(() => undefined);
    // Each step runs whatever the one before did (a full disk failing the audit's head must not leave the
    // ledger open and the workspace locked by this live process); the first failure is thrown at the end.
    let failure: unknown;
    const step = async (close: () => unknown): Promise<void> => {
      try {
        await close();
      } catch (error) {
        failure ??= error;
      }
    };
    await step(() => this.externalMcp.close());
    await step(() => this.plugins.close());
    // The sessions' journals are folded into session.json, so a stopped workspace is whole in session.json.
    await step(() => this.sessions.close());
    await step(() => this.audit.close());
    await step(() => this.usage.close());
    this.container.clearInstances();
    await step(() => this.lock?.release());
    if (failure !== undefined) throw failure;
  }
}

function registerCore(container: DependencyContainer, workspace: Workspace, config: KernelConfig, options: KernelOptions): void {
  const info: KernelInfo = { version: KERNEL_VERSION, startedAt: new Date().toISOString() };
  container.registerInstance(KERNEL_CONTAINER, container);
  container.registerInstance(WORKSPACE, workspace);
  container.registerInstance(KERNEL_CONFIG, config);
  container.registerInstance(KERNEL_INFO, info);
  container.registerInstance(LOGGER, options.logger ?? createLogger({ tag: 'quire' }));
  container.registerInstance(PROCESS_ENV, options.env ?? process.env);
  container.registerInstance(PLUGIN_HOST_OPTIONS, {
    nativeManifestsDir: options.nativeManifestsDir ?? NATIVE_MANIFESTS_DIR,
    codeRoot: options.codeRoot ?? CODE_ROOT,
  });
  container.registerSingleton(GRANTS_STORE, FileGrantsStore);
  container.registerSingleton(CONFIRMATION_STORE, ConfirmationStore);
  container.registerSingleton(AUDIT_LOG, AuditLog);
  container.registerSingleton(ACTION_REGISTRY, ActionRegistry);
  container.registerSingleton(BACKEND_REGISTRY, BackendRegistry);
  container.registerSingleton(ACTION_PIPELINE, ActionPipeline);
  container.registerSingleton(PLUGIN_HOST, PluginHost);
  container.registerSingleton(AUTHENTICATOR, Authenticator);
  container.registerSingleton(SESSION_STORE, FileSessionStore);
  const log = options.logger ?? container.resolve<Logger>(LOGGER);
  container.registerInstance(JOB_MANAGER, new JobManager(join(workspace.root, 'jobs'), config.actions.keepJobs, log.child('jobs'), config.actions.jobTimeoutMs));
}

/** HMAC-SHA256 of a challenge under a boot's key, base64url: what /healthz answers and a client checks. */
export function instanceProof(key: string, challenge: string): string {
  return createHmac('sha256', key).update(challenge).digest('base64url');
}
