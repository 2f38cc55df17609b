import { KernelError, ManifestError, toKernelError, type ErrorCode, type ManifestIssue } from '../errors.js';
import type { ManifestRecord, ValidManifestRecord } from '../manifest/load-manifests.js';
import { activationOrder, coreCapabilities, recordId } from './catalog-checks.js';

/** One reason a plugin was refused; `pointer` is a JSON pointer into `file` (its manifest, or quire.json). */
/** What external MCP servers' plugin ids begin with (pluginIdOf in core/mcp/client/external-servers.ts). */
const MCP_SERVER_PREFIX = 'mcp-';

export interface PluginProblem {
  code: ErrorCode;
  message: string;
  pointer?: string;
  file?: string;
}

export interface PlanOptions {
  isEnabled(id: string): boolean;
  /** A problem of this plugin stops the start (native plugins); anyone else's problem refuses only that plugin. */
  isFatal(record: ManifestRecord): boolean;
  /** The validated config of a plugin; throws a KernelError with `details.issues` when it does not fit. */
  configOf?(record: ValidManifestRecord): Record<string, unknown>;
}

export interface ActivationPlan {
  /** The plugins to activate, each after the plugins providing what it requires. */
  order: ValidManifestRecord[];
  disabled: ManifestRecord[];
  /** Refused plugins by manifest file: a user plugin shadowing a native one shares its id, not its file. */
  refused: Map<string, PluginProblem[]>;
  configs: Map<string, Record<string, unknown>>;
}

export function problemOf(error: KernelError): PluginProblem {
  const pointer = error.details.pointer;
  return { code: error.code, message: error.message, ...(typeof pointer === 'string' ? { pointer } : {}) };
}

/** The problem of a plugin that requires what a refused plugin provides. */
export function dependencyRefused(id: string, capability: string, provider: string): KernelError {
  return new KernelError('PLUGIN_DEPENDENCY_REFUSED', `plugin '${id}' requires '${capability}', provided by '${provider}', which was refused`, { details: { plugin: id, capability, provider } });
}

/**
 * Decides, from the manifests alone, which plugins to activate and in what order. One bad plugin never
 * stops the kernel: a user plugin with an invalid manifest, a shadowed id or wire name, a config that does
 * not fit, or a requirement that is missing, refused or cyclic is refused with its problems, and so is
 * every plugin that needs it. Only a fatal record's problem (a native plugin's) throws.
 */
export function planActivation(all: readonly ManifestRecord[], options: PlanOptions): ActivationPlan {
  return new Planner(all, options).plan();
}

class Planner {
  private accepted: ValidManifestRecord[] = [];
  private readonly refusedRecords: ManifestRecord[] = [];
  private readonly refused = new Map<string, PluginProblem[]>();
  private readonly disabled: ManifestRecord[] = [];
  private readonly configs = new Map<string, Record<string, unknown>>();

  constructor(private readonly all: readonly ManifestRecord[], private readonly options: PlanOptions) {}

  plan(): ActivationPlan {
    this.checkManifests();
    this.checkWireNames();
    this.checkConfigs();
    this.checkProvides();
    this.checkRequires();
    return { order: this.ordered(), disabled: this.disabled, refused: this.refused, configs: this.configs };
  }

  private refuse(record: ManifestRecord, error: KernelError, problems: PluginProblem[] = [problemOf(error)]): void {
    if (this.options.isFatal(record)) throw error;
    this.refused.set(record.file, problems);
    this.refusedRecords.push(record);
    this.accepted = this.accepted.filter((candidate) => candidate !== record);
  }

  /**
   * Ids first (a user plugin may not shadow a native one), then validity; native problems are thrown
   * together. Only a valid manifest takes its id: a broken copy of a plugin (a folder named otherwise,
   * sorting first) is refused for what is wrong with it, and took the id from the plugin itself, which
   * was then refused as its duplicate.
   */
  private checkManifests(): void {
    const seen = new Map<string, string>();
    const fatal: ManifestIssue[] = [];
    for (const record of this.all) {
      const id = recordId(record);
      const other = record.ok || this.options.isFatal(record) ? seen.get(id) : undefined;
      if (other !== undefined) {
        this.refuse(record, new KernelError('PLUGIN_DUPLICATE_ID', `two plugins have the id '${id}': ${other} and ${record.file}`, { details: { id, files: [other, record.file] } }));
        continue;
      }
      if (record.ok || this.options.isFatal(record)) seen.set(id, record.file);
      // The ids of external MCP servers' tools (core/mcp/client): a plugin under one would share their
      // registry entries and their grants (a grant given for the server's tool matched the plugin's).
      if (id.startsWith(MCP_SERVER_PREFIX) && !this.options.isFatal(record)) {
        this.refuse(record, new KernelError('PLUGIN_RESERVED_ID', `the plugin id '${id}' is reserved: ids beginning '${MCP_SERVER_PREFIX}' name external MCP servers; rename the plugin`, { details: { id } }));
        continue;
      }
      if (!this.options.isEnabled(id)) this.disabled.push(record);
      else if (record.ok) this.accepted.push(record);
      else if (this.options.isFatal(record)) fatal.push(...record.issues);
      else this.refuse(record, new ManifestError(record.issues), record.issues.map(({ code, message, pointer, file }) => ({ code, message, pointer, file })));
    }
    if (fatal.length > 0) throw new ManifestError(fatal);
  }

  /** Wire names are unique across plugins: the plugin listed later (a user plugin after the natives) is refused. */
  private checkWireNames(): void {
    const owner = new Map<string, string>();
    for (const record of [...this.accepted]) {
      const id = record.compiled.manifest.id;
      const clash = record.compiled.actions.find((action) => owner.has(action.wireName));
      if (clash) {
        const other = owner.get(clash.wireName)!;
        this.refuse(record, new KernelError('WIRE_NAME_COLLISION', `plugins '${other}' and '${id}' both define the action '${clash.wireName}'; disable one of them in quire.json`, { details: { wireName: clash.wireName, plugins: [other, id] } }));
        continue;
      }
      for (const action of record.compiled.actions) owner.set(action.wireName, id);
    }
  }

  private checkConfigs(): void {
    const { configOf } = this.options;
    if (!configOf) return;
    for (const record of [...this.accepted]) {
      try {
        this.configs.set(record.compiled.manifest.id, configOf(record));
      } catch (thrown) {
        const error = toKernelError(thrown);
        const issues = Array.isArray(error.details.issues) ? error.details.issues as { pointer: string; message: string }[] : [];
        this.refuse(record, error, issues.length === 0 ? [problemOf(error)] : issues.map((issue) => ({ code: error.code, message: issue.message, pointer: issue.pointer, file: 'quire.json' })));
      }
    }
  }

  /** Two plugins providing one capability: the later one is refused (two natives stop the start when ordered). */
  private checkProvides(): void {
    const provider = new Map<string, string>();
    for (const record of [...this.accepted]) {
      const { id, provides = [] } = record.compiled.manifest;
      const taken = provides.find((name) => provider.has(name));
      if (taken !== undefined && !this.options.isFatal(record)) {
        this.refuse(record, new KernelError('PLUGIN_PROVIDES_CONFLICT', `plugins '${provider.get(taken)}' and '${id}' both provide '${taken}'`, { details: { capability: taken, plugins: [provider.get(taken), id] } }));
        continue;
      }
      for (const name of provides) if (!provider.has(name)) provider.set(name, id);
    }
  }

  /** Refuses plugins whose requirements nothing accepted provides, until no refusal makes another. */
  private checkRequires(): void {
    for (let changed = true; changed;) {
      changed = false;
      const available = coreCapabilities();
      for (const record of this.accepted) for (const name of record.compiled.manifest.provides ?? []) available.add(name);
      for (const record of [...this.accepted]) {
        const { id, requires = [] } = record.compiled.manifest;
        const missing = requires.filter((name) => !available.has(name));
        // A native plugin's missing requirement is reported by the ordering, as it always was.
        if (missing.length === 0 || this.options.isFatal(record)) continue;
        const errors = missing.map((name) => this.missingRequirement(id, name));
        this.refuse(record, errors[0]!, errors.map(problemOf));
        changed = true;
      }
    }
  }

  private missingRequirement(id: string, capability: string): KernelError {
    const refused = this.refusedRecords.find((record) => (record.ok ? record.compiled.manifest.provides : record.provides)?.includes(capability));
    if (refused) return dependencyRefused(id, capability, recordId(refused));
    const disabled = this.disabled.find((record) => record.ok && record.compiled.manifest.provides?.includes(capability));
    const why = disabled ? `provided by '${recordId(disabled)}', which is disabled` : 'which no enabled plugin provides';
    return new KernelError('PLUGIN_DEPENDENCY_MISSING', `plugin '${id}' requires '${capability}', ${why}`, { details: { plugin: id, capability } });
  }

  /** The activation order; the user plugins of a cycle are refused (and what needs them), a native cycle throws. */
  private ordered(): ValidManifestRecord[] {
    const disabledProviders = new Map<string, string>();
    for (const record of this.disabled) if (record.ok) for (const name of record.compiled.manifest.provides ?? []) disabledProviders.set(name, recordId(record));
    for (;;) {
      try {
        const byId = new Map(this.accepted.map((record) => [record.compiled.manifest.id, record]));
        return activationOrder(this.accepted, disabledProviders).map((id) => byId.get(id)!);
      } catch (error) {
        if (!(error instanceof KernelError) || error.code !== 'PLUGIN_DEPENDENCY_CYCLE') throw error;
        const cycle = new Set(error.details.cycle as string[]);
        const members = this.accepted.filter((record) => cycle.has(record.compiled.manifest.id));
        if (members.length === 0 || members.some((record) => this.options.isFatal(record))) throw error;
        for (const record of members) this.refuse(record, error);
        this.checkRequires();
      }
    }
  }
}
