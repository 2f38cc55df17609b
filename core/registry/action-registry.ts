import type { ValidateFunction } from 'ajv';
import { injectable } from '../di.js';
import { KernelError } from '../errors.js';
import type { ActionHandler, ActionManifest, Effect, PluginSource } from '../plugin-api.js';
import type { Logger } from '../log.js';

/** One callable action, as every surface (agent, HTTP, MCP) sees it. */
export interface RegisteredAction {
  pluginId: string;
  source: PluginSource;
  trusted: boolean;
  tool: string;
  action: string;
  wireName: string;
  spec: ActionManifest;
  /** As declared in the manifest; what enforcement (egress, read-only handles) uses. */
  declaredEffects: readonly Effect[];
  /** What the gate, the role check and annotations use (untrusted silence ⇒ every effect). */
  effects: readonly Effect[];
  validateInput: ValidateFunction;
  validateOutput: ValidateFunction | undefined;
  handler: ActionHandler;
  /** The plugin's logger, handed to each call. */
  log: Logger;
  /**
   * An external MCP server's tool: its own name, as the server spells it (`deleteFile`), which the
   * action's name (`deletefile`) may not be. Deny rules match either.
   */
  externalName?: string;
  /**
   * Why the action cannot work now (a backend it requires is not selected), or undefined when it can;
   * the agent is not offered it meanwhile. Absent on actions that need nothing.
   */
  unavailable?: () => string | undefined;
  /** Its own time limit, in place of actions.timeoutMs (an external MCP server's `timeoutMs`). */
  timeoutMs?: number;
}

/** The callable actions of the enabled, activated plugins, looked up by wire name or by path. */
@injectable()
export class ActionRegistry {
  private readonly byWireName = new Map<string, RegisteredAction>();
  private readonly byPath = new Map<string, RegisteredAction>();
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after the set of actions changed (a plugin enabled or disabled); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A listener's failure (a closed MCP session) must not undo the change or stop the others.
      }
    }
  }

  /** Adds a plugin's actions all at once, or none of them if any wire name is taken. */
  addAll(actions: readonly RegisteredAction[]): void {
    for (const entry of actions) {
      const existing = this.byWireName.get(entry.wireName);
      if (existing) {
        throw new KernelError(
          'WIRE_NAME_COLLISION',
          `plugins '${existing.pluginId}' and '${entry.pluginId}' both define the action '${entry.wireName}'; disable one of them in quire.json`,
          { details: { wireName: entry.wireName, plugins: [existing.pluginId, entry.pluginId] } },
        );
      }
    }
    for (const entry of actions) {
      this.byWireName.set(entry.wireName, entry);
      this.byPath.set(pathKey(entry.pluginId, entry.tool, entry.action), entry);
    }
    if (actions.length > 0) this.changed();
  }

  removePlugin(pluginId: string): void {
    let removed = 0;
    for (const [name, entry] of this.byWireName) {
      if (entry.pluginId !== pluginId) continue;
      this.byWireName.delete(name);
      this.byPath.delete(pathKey(entry.pluginId, entry.tool, entry.action));
      removed++;
    }
    if (removed > 0) this.changed();
  }

  /**
   * Replaces all of a plugin's actions in one step (an external server's tools after tools/list_changed),
   * telling listeners once, and only if the set of names or definitions changed.
   */
  replacePlugin(pluginId: string, actions: readonly RegisteredAction[]): void {
    const before = this.list().filter((entry) => entry.pluginId === pluginId);
    // Clashes are found before anything is removed, so a refused replacement leaves the old actions.
    for (const entry of actions) {
      const holder = this.byWireName.get(entry.wireName);
      if (holder && holder.pluginId !== pluginId) {
        throw new KernelError('WIRE_NAME_COLLISION', `plugins '${holder.pluginId}' and '${pluginId}' both define the action '${entry.wireName}'`, { details: { wireName: entry.wireName, plugins: [holder.pluginId, pluginId] } });
      }
    }
    const signature = (entries: readonly RegisteredAction[]) => entries.map((entry) => `${entry.wireName}\u0000${entry.spec.description}\u0000${JSON.stringify(entry.spec.input)}\u0000${entry.effects.join(',')}`).sort().join('\n');
    const listeners = [...this.listeners];
    this.listeners.clear();
    try {
      this.removePlugin(pluginId);
      this.addAll(actions);
    } finally {
      for (const listener of listeners) this.listeners.add(listener);
    }
    if (signature(before) !== signature(actions)) this.changed();
  }

  get(wireName: string): RegisteredAction | undefined {
    return this.byWireName.get(wireName);
  }

  find(pluginId: string, tool: string, action: string): RegisteredAction | undefined {
    return this.byPath.get(pathKey(pluginId, tool, action));
  }

  list(): RegisteredAction[] {
    return [...this.byWireName.values()];
  }
}

function pathKey(pluginId: string, tool: string, action: string): string {
  return `${pluginId}\u0000${tool}\u0000${action}`;
}
