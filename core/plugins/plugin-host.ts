import { pathToFileURL } from 'node:url';
import { inject, injectable, type DependencyContainer } from '../di.js';
import { ACTION_REGISTRY, BACKEND_REGISTRY, KERNEL_CONFIG, KERNEL_CONTAINER, LOGGER, PLUGIN_VISIBLE_CORE_TOKENS, WORKSPACE } from '../core-tokens.js';
import { ConflictError, KernelError, PluginError, isKernelError } from '../errors.js';
import type { KernelConfig } from '../config/kernel-config.js';
import type { Logger } from '../log.js';
import type { PluginContext, PluginDefinition, PluginHandlers, PluginManifest } from '../plugin-api.js';
import { effectiveEffects } from '../gate/effects.js';
import type { ActionRegistry, RegisteredAction } from '../registry/action-registry.js';
import type { BackendRegistry } from '../backends/backend-registry.js';
import type { Workspace } from '../workspace.js';
import { createToken } from '../tokens.js';
import { runInActivation, type ActivatingPlugin } from '../egress/action-scope.js';
import { coreCapabilities, recordId } from './catalog-checks.js';
import { dependencyRefused, problemOf, type PluginProblem } from './activation-plan.js';
import { matchHandlers } from './match-handlers.js';
import { createPluginContext, type Disposer } from './plugin-context.js';
import { createPluginProcess, proxyHandlers, runsOutOfProcess } from './out-of-process.js';
import type { PluginProcess, ProcessStatus } from './plugin-process.js';
import { loadPluginCatalog, validatePluginConfig, type PluginCatalog } from './plugin-catalog.js';
import type { ManifestRecord, ValidManifestRecord } from '../manifest/load-manifests.js';

export interface PluginHostOptions {
  nativeManifestsDir: string;
  codeRoot: string;
}

export const PLUGIN_HOST_OPTIONS = createToken<PluginHostOptions>('core.plugin-host-options');

interface ActivePlugin {
  id: string;
  disposers: Disposer[];
  /** Activation failed or timed out; anything it registers from now on is disposed at once. */
  abandoned: boolean;
}

/** Loads, orders, activates and disposes plugins (DESIGN.md §4). */
@injectable()
export class PluginHost {
  private catalog: PluginCatalog | undefined;
  private readonly active: ActivePlugin[] = [];
  private readonly runtimeEnabled = new Map<string, boolean>();
  private readonly processes = new Map<string, PluginProcess>();
  private toggling: Promise<void> = Promise.resolve();
  /** Set by close(): no plugin is enabled or disabled after it. */
  private closing = false;

  constructor(
    @inject(KERNEL_CONFIG) private readonly config: KernelConfig,
    @inject(WORKSPACE) private readonly workspace: Workspace,
    @inject(ACTION_REGISTRY) private readonly registry: ActionRegistry,
    @inject(LOGGER) private readonly log: Logger,
    @inject(KERNEL_CONTAINER) private readonly container: DependencyContainer,
    @inject(PLUGIN_HOST_OPTIONS) private readonly options: PluginHostOptions,
    @inject(BACKEND_REGISTRY) private readonly backends: BackendRegistry,
  ) {}

  /**
   * Validates every manifest, orders the enabled plugins by requires/provides, and activates them in
   * order. A user plugin that fails (manifest, config, requirements, loading or `activate`) is refused
   * with its problems, and so is every plugin needing what it provides; a native plugin's failure stops the start.
   */
  async start(): Promise<void> {
    const catalog = await loadPluginCatalog(this.config, this.options.nativeManifestsDir, this.options.codeRoot, this.workspace.pluginsDir);
    this.catalog = catalog;
    for (const record of catalog.all) {
      const problems = catalog.refused.get(record.file);
      if (problems) this.logRefused(recordId(record), record.file, problems);
    }
    const refusedProviders = new Map<string, string>();
    try {
      for (const record of catalog.order) await this.activateOrRefuse(record, catalog, refusedProviders);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  private async activateOrRefuse(record: ValidManifestRecord, catalog: PluginCatalog, refusedProviders: Map<string, string>): Promise<void> {
    const { id, requires = [], provides = [] } = record.compiled.manifest;
    const blocked = requires.filter((name) => refusedProviders.has(name)).map((name) => dependencyRefused(id, name, refusedProviders.get(name)!));
    try {
      if (blocked.length > 0) throw blocked[0];
      await this.activate(record, catalog.configs.get(id) ?? {});
    } catch (error) {
      if (record.source === 'native' || !isKernelError(error)) throw error;
      const problems = blocked.length > 0 ? blocked.map(problemOf) : [problemOf(error)];
      catalog.refused.set(record.file, problems);
      for (const name of provides) refusedProviders.set(name, id);
      this.logRefused(id, record.file, problems);
    }
  }

  private logRefused(id: string, file: string, problems: readonly PluginProblem[]): void {
    this.log.warn('plugin refused', { plugin: id, file, problems });
  }

  /** Everything found on disk, for listings (`GET /api/plugins`). */
  getCatalog(): PluginCatalog | undefined {
    return this.catalog;
  }

  /** Why a plugin (by its manifest file) was refused at start; undefined when it was not. */
  problemsOf(record: ManifestRecord): readonly PluginProblem[] | undefined {
    return this.catalog?.refused.get(record.file);
  }

  /** The manifest of the active plugin that provides `capability` (such as 'agent.model'). */
  activeProviderOf(capability: string): PluginManifest | undefined {
    for (const plugin of this.active) {
      const manifest = this.catalog?.order.find((candidate) => candidate.compiled.manifest.id === plugin.id)?.compiled.manifest;
      if (manifest?.provides?.includes(capability)) return manifest;
    }
    return undefined;
  }

  isActive(id: string): boolean {
    return this.active.some((plugin) => plugin.id === id);
  }

  /**
   * Whether a plugin is meant to run: quire.json's `enabled`, unless changed while serving. The change
   * is not written to quire.json; a restart goes back to the file.
   */
  isEnabled(id: string): boolean {
    return this.runtimeEnabled.get(id) ?? this.config.plugins.get(id)?.enabled !== false;
  }

  /**
   * Enables or disables a plugin while serving: its tools appear in or leave the registry (and so HTTP,
   * MCP and the model) at once. Plugins that provide capabilities are part of the kernel's wiring and
   * change only with a restart; a plugin can be enabled only if what it requires is there.
   */
  setEnabled(id: string, enabled: boolean): Promise<void> {
    // Refused once the kernel closes: a plugin activated after close() would outlive it (its process too).
    if (this.closing) return Promise.reject(new KernelError('NOT_READY', `the kernel is stopping: plugin '${id}' was not ${enabled ? 'enabled' : 'disabled'}`, { details: { plugin: id } }));
    // One change at a time: a disable arriving while an enable is still activating waits for it.
    const next = this.toggling.then(() => this.applyEnabled(id, enabled));
    this.toggling = next.catch(() => undefined);
    return next;
  }

  private async applyEnabled(id: string, enabled: boolean): Promise<void> {
    // A broken copy of a plugin shares its id: the valid manifest is the plugin.
    const matching = this.catalog?.all.filter((candidate) => recordId(candidate) === id) ?? [];
    const record = matching.find((candidate) => candidate.ok) ?? matching[0];
    if (!record) {
      const hint = id.startsWith('mcp-') ? ' (external MCP servers are enabled or disabled in quire.json, mcp.servers.<name>.enabled)' : '';
      throw new KernelError('NOT_FOUND', `no plugin with id '${id}'${hint}`, { details: { plugin: id } });
    }
    if (!record.ok) throw new ConflictError('CONFLICT', `plugin '${id}' has an invalid manifest and cannot be enabled`, { details: { plugin: id } });
    if (this.problemsOf(record)) throw new ConflictError('CONFLICT', `plugin '${id}' was refused at start (GET /api/plugins lists why); fix it and restart`, { details: { plugin: id } });
    const { manifest } = record.compiled;
    if ((manifest.provides ?? []).length > 0) {
      throw new ConflictError('CONFLICT', `plugin '${id}' provides ${manifest.provides!.join(', ')}; enable or disable it in quire.json and restart`, { details: { plugin: id, provides: manifest.provides } });
    }
    if (enabled === this.isActive(id)) {
      this.runtimeEnabled.set(id, enabled);
      return;
    }
    if (!enabled) {
      const index = this.active.findIndex((plugin) => plugin.id === id);
      const [plugin] = this.active.splice(index, 1);
      this.registry.removePlugin(id);
      await this.runDisposers(plugin!);
      this.runtimeEnabled.set(id, false);
      return;
    }
    const available = coreCapabilities();
    for (const plugin of this.active) for (const name of this.catalog?.order.find((candidate) => candidate.compiled.manifest.id === plugin.id)?.compiled.manifest.provides ?? []) available.add(name);
    const missing = (manifest.requires ?? []).filter((name) => !available.has(name));
    if (missing.length > 0) throw new ConflictError('CONFLICT', `plugin '${id}' requires ${missing.join(', ')}, which no active plugin provides`, { details: { plugin: id, missing } });
    let config: Record<string, unknown>;
    try {
      config = this.catalog?.configs.get(id) ?? validatePluginConfig(record, this.config);
    } catch (error) {
      // Its quire.json config is wrong: for the person to fix (the message names the field), not a kernel failure.
      if (isKernelError(error) && error.code === 'PLUGIN_CONFIG_INVALID') throw new ConflictError('CONFLICT', error.message, { details: error.details });
      throw error;
    }
    try {
      await this.activate(record, config);
    } catch (error) {
      // Its names taken meanwhile (an external MCP tool): a conflict to resolve, not a kernel failure.
      if (isKernelError(error) && error.code === 'WIRE_NAME_COLLISION') throw new ConflictError('CONFLICT', error.message, { details: error.details });
      throw error;
    }
    this.runtimeEnabled.set(id, true);
  }

  /** Disposes active plugins in reverse activation order; one failing disposer does not stop the others. */
  async close(): Promise<void> {
    this.closing = true;
    // An enable still activating finishes first, so that its plugin is disposed with the others.
    await this.toggling;
    while (this.active.length > 0) {
      const plugin = this.active.pop();
      if (!plugin) break;
      this.registry.removePlugin(plugin.id);
      await this.runDisposers(plugin);
    }
  }

  private async activate(record: ValidManifestRecord, config: Record<string, unknown>): Promise<void> {
    const { manifest } = record.compiled;
    const plugin: ActivePlugin = { id: manifest.id, disposers: [], abandoned: false };
    const provided = new Set<string>();
    const ctx = createPluginContext({
      manifest, source: record.source, config, log: this.log.child(manifest.id), container: this.container,
      visibleCoreTokens: PLUGIN_VISIBLE_CORE_TOKENS, provided, backends: this.backends,
      trusted: record.source === 'native' || this.config.plugins.get(manifest.id)?.trusted === true,
      addDisposer: (fn) => {
        if (plugin.abandoned) void this.runDisposers({ ...plugin, disposers: [fn] });
        else plugin.disposers.push(fn);
      },
    });
    try {
      const handlers = runsOutOfProcess(record, this.config)
        ? await this.startProcess(record, config, ctx, plugin)
        // The limit covers loading the module too: a top-level await that never settles must not hang the boot.
        // In the plugin's activation scope: sockets it opens there are its own, checked on every later write.
        : await this.withActivationLimit(manifest.id, () => runInActivation(this.activating(manifest.id), async () => (await this.importDefinition(record)).activate(ctx)));
      const match = matchHandlers(record.compiled.actions, handlers);
      if (!match.ok) {
        const parts = [match.missing.length ? `missing handlers: ${match.missing.join(', ')}` : '', match.undeclared.length ? `handlers not in the manifest: ${match.undeclared.join(', ')}` : ''];
        throw new PluginError('PLUGIN_ACTION_MISMATCH', manifest.id, `handlers differ from the manifest's actions (${parts.filter(Boolean).join('; ')})`, { details: { missing: match.missing, undeclared: match.undeclared } });
      }
      const unprovided = (manifest.provides ?? []).filter((name) => !provided.has(name));
      if (unprovided.length > 0) {
        throw new PluginError('PLUGIN_ACTIVATION_FAILED', manifest.id, `declares but did not provide: ${unprovided.join(', ')}`);
      }
      this.registry.addAll(this.toRegistered(record, match.handlers, ctx.log));
      this.active.push(plugin);
      this.log.info('plugin activated', { plugin: manifest.id, source: record.source, actions: match.handlers.size });
    } catch (error) {
      plugin.abandoned = true;
      await this.runDisposers(plugin);
      if (error instanceof PluginError && error.pluginId === manifest.id) throw error;
      throw isKernelError(error)
        ? new PluginError(error.code, manifest.id, error.message, { cause: error, details: error.details })
        : new PluginError('PLUGIN_ACTIVATION_FAILED', manifest.id, `activation failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Refusals outside any action have no call to audit: they are logged, naming the plugin. */
  private activating(id: string): ActivatingPlugin {
    return { plugin: id, onRefused: (_kind, target) => this.log.warn('egress refused outside any action', { plugin: id, target }) };
  }

  /**
   * An untrusted user plugin in a process of its own: loading and activation there are bounded by ending
   * the process, and the handlers the registry holds send each call to it.
   */
  private async startProcess(record: ValidManifestRecord, config: Record<string, unknown>, ctx: PluginContext, plugin: ActivePlugin): Promise<PluginHandlers> {
    const id = record.compiled.manifest.id;
    const child = createPluginProcess(record, config, ctx, this.config, ctx.log);
    this.processes.set(id, child);
    plugin.disposers.push(async () => {
      if (this.processes.get(id) === child) this.processes.delete(id);
      await child.close();
    });
    return proxyHandlers(await child.start(), child);
  }

  /** How the process of a plugin that runs out of process is doing; undefined for one in the kernel's process. */
  processOf(id: string): ProcessStatus | undefined {
    return this.processes.get(id)?.status();
  }

  private async importDefinition(record: ValidManifestRecord): Promise<PluginDefinition> {
    const id = record.compiled.manifest.id;
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(record.entryPath).href)) as { default?: unknown };
    } catch (error) {
      throw new PluginError('PLUGIN_LOAD_FAILED', id, `cannot load ${record.entryPath}: ${(error as Error).message}`, { cause: error });
    }
    const definition = module.default as Partial<PluginDefinition> | undefined;
    if (typeof definition?.activate !== 'function') {
      throw new PluginError('PLUGIN_LOAD_FAILED', id, `${record.entryPath} must export definePlugin({ activate }) as its default export`);
    }
    return definition as PluginDefinition;
  }

  private withActivationLimit(id: string, activate: () => PluginHandlers | Promise<PluginHandlers>): Promise<PluginHandlers> {
    const limit = this.config.pluginHost.activationTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PluginError('PLUGIN_ACTIVATION_TIMEOUT', id, `loading and activation did not finish within ${limit} ms`)), limit);
    });
    return Promise.race([Promise.resolve().then(activate), timeout]).finally(() => clearTimeout(timer));
  }

  private toRegistered(record: ValidManifestRecord, handlers: Map<string, RegisteredAction['handler']>, log: Logger): RegisteredAction[] {
    const { manifest } = record.compiled;
    const trusted = record.source === 'native' || this.config.plugins.get(manifest.id)?.trusted === true;
    return record.compiled.actions.map((action) => {
      const entry: RegisteredAction = {
        pluginId: manifest.id,
        source: record.source,
        trusted,
        tool: action.tool,
        action: action.action,
        wireName: action.wireName,
        spec: action.spec,
        declaredEffects: action.spec.effects,
        effects: effectiveEffects(action.spec.effects, record.source, trusted),
        validateInput: action.validateInput,
        validateOutput: action.validateOutput,
        handler: handlers.get(action.wireName) as RegisteredAction['handler'],
        log,
      };
      const kinds = action.spec.backends ?? [];
      if (kinds.length === 0) return entry;
      // Read at each call: the selected backend's plugin may activate after this one, or be refused.
      const backends = this.backends;
      Object.defineProperty(entry, 'effects', {
        enumerable: true,
        get: () => effectiveEffects([...new Set([...action.spec.effects, ...backends.effectsOf(kinds)])], record.source, trusted),
      });
      if (action.spec.backendsRequired) {
        // The selection's own reason: 'no embedder is selected' was said also of one named but misspelt.
        entry.unavailable = () => kinds.map((kind) => backends.whyUnavailable(kind)).find((reason) => reason !== undefined);
      }
      return entry;
    });
  }

  private async runDisposers(plugin: ActivePlugin): Promise<void> {
    for (const dispose of [...plugin.disposers].reverse()) {
      try {
        await dispose();
      } catch (error) {
        this.log.error('plugin dispose failed', { plugin: plugin.id, error: (error as Error).message });
      }
    }
    plugin.disposers.length = 0;
  }
}
