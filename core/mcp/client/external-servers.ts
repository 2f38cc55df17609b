import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ExternalMcpServer, KernelConfig } from '../../config/kernel-config.js';
import { ConflictError, KernelError } from '../../errors.js';
import type { GrantsStore } from '../../gate/grants-store.js';
import type { Logger } from '../../log.js';
import { isValidWireName, wireName } from '../../manifest/wire-name.js';
import type { ActionRegistry, RegisteredAction } from '../../registry/action-registry.js';
import { validateManifest, type CompiledAction } from '../../manifest/validate-manifest.js';
import type { ActionManifest, PluginManifest } from '../../plugin-api.js';
import { importEffects } from './external-effects.js';
import type { ExternalServer, ToolListing } from './external-server.js';
import { definitionHash, type ToolPins } from './tool-pins.js';

export type ServerState = 'connected' | 'failed' | 'disabled';

/** A tool waiting for a person: new since the server was first listed, or changed since it was pinned. */
interface Pending {
  name: string;
  reason: 'new' | 'changed';
  hash: string;
  /** What the person is asked to accept, in full. */
  definition: Tool;
}

interface ServerEntry {
  server: ExternalServer;
  /** How it is reached, as `GET /api/mcp/servers` shows it (no secrets). */
  endpoint: Record<string, unknown>;
  state: ServerState;
  error?: string;
  tools: { name: string; wireName: string; hash: string; effects: readonly string[] }[];
  pending: Pending[];
  refused: { name: string; reason: string }[];
  /** One refresh at a time; a list_changed during one asks for another after it. */
  refreshing?: Promise<void>;
  again?: boolean;
  reconnects: number;
  closed?: boolean;
  /** The manifest built for the tools offered: what `GET /api/mcp/servers` shows. */
  manifest?: PluginManifest;
  /** The one pending reconnection, if any. */
  timer?: NodeJS.Timeout;
  connectedAt?: number;
  /** Moves on at each connection and each refresh: a listing asked for before is out of date. */
  generation: number;
}

export interface ServerDescription {
  id: string;
  name: string;
  source: 'mcp';
  state: ServerState;
  trusted: boolean;
  endpoint: Record<string, unknown>;
  error?: string;
  tools: ServerEntry['tools'];
  pending: Pending[];
  refused: ServerEntry['refused'];
  manifest?: PluginManifest;
}

/** The plugin id an external server's tools are registered under. */
// User plugins may not take ids with this prefix (activation-plan.ts).
export const pluginIdOf = (name: string) => `mcp-${name}`;

/** An external tool's input schema, as JSON, at most (a native manifest's are written by hand). */
const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

/** Tool names we take from a server: anything else is refused rather than sanitised into a clash. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const MAX_RECONNECT_DELAY_MS = 5 * 60_000;
/** A server up this long before it drops is reconnected from the shortest delay again. */
const STABLE_MS = 30_000;

/**
 * External MCP servers as plugins (DESIGN.md §4): connected at boot (a failing one is reported, never
 * fatal), their tools pinned by definition hash and registered as actions with effects from their
 * annotations, so they pass the same gate, snapshot rule, audit and time limits as native actions.
 *
 * The first listing of a server is trusted on first sight; after that a new or changed tool waits for
 * a person's approval of the definition shown, and a wire name never passes to another tool unseen.
 */
export class ExternalMcpServers {
  private readonly entries = new Map<string, ServerEntry>();
  /** Compiled actions by definition hash and wire name: a refresh recompiles only what changed. */
  private readonly compiled = new Map<string, CompiledAction>();

  constructor(private readonly config: KernelConfig, private readonly registry: ActionRegistry, private readonly pins: ToolPins, private readonly grants: GrantsStore, private readonly env: NodeJS.ProcessEnv, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.pins.load();
    const configured = Object.entries(this.config.mcp.servers);
    if (configured.length === 0) return;
    // The MCP client SDK is loaded only when a server is configured, not at every start.
    const client = await import('./external-server.js');
    const entries = configured.map(([name, settings]) => this.entryFor(client, name, settings));
    // Connected together (one slow server does not hold up the others), then listed in config order, so
    // that which server gets a contested wire name does not depend on timing.
    const connected = await Promise.all(entries.map((entry) => (entry.state === 'disabled' ? false : this.connectOnly(entry))));
    // Listed together too (three servers slow to list held the start 30 s each, one after another),
    // and taken in config order.
    const generations = entries.map((entry) => entry.generation);
    const listings = entries.map((entry, index) => (connected[index] ? entry.server.listTools() : undefined));
    for (const listing of listings) listing?.catch(() => undefined);
    // A listing is taken only if nothing happened to its server since it was asked for (a list_changed
    // refreshed it, the connection dropped and came back): it would replace a newer one.
    for (const [index, entry] of entries.entries()) {
      if (connected[index]) await this.refresh(entry, entry.generation === generations[index] ? listings[index] : undefined);
    }
  }

  describe(): ServerDescription[] {
    return [...this.entries.values()].map((entry) => ({
      id: pluginIdOf(entry.server.name), name: entry.server.name, source: 'mcp', state: entry.state, trusted: entry.server.config.trusted === true,
      endpoint: entry.endpoint,
      ...(entry.error ? { error: entry.error } : {}),
      tools: entry.tools, pending: entry.pending, refused: entry.refused,
      ...(entry.manifest ? { manifest: entry.manifest } : {}),
    }));
  }

  /**
   * A person accepts a new or changed definition, the one they were shown (`hash`): it is pinned and
   * offered. Standing grants for that action were given for the old definition and are revoked.
   */
  async approve(name: string, tool: string, hash: unknown): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw new KernelError('NOT_FOUND', `no external MCP server named '${name}'`, { details: { server: name } });
    const pending = entry.pending.find((candidate) => candidate.name === tool);
    if (!pending) throw new ConflictError('CONFLICT', `the tool '${tool}' of '${name}' has no definition waiting for approval`, { details: { server: name, tool } });
    if (pending.hash !== hash) {
      throw new ConflictError('CONFLICT', `the definition of '${tool}' is not the one approved (send the hash listed under pending); it may have changed since`, { details: { server: name, tool, pending: pending.hash, field: 'hash' } });
    }
    const wire = this.pins.get(name, tool)?.wireName ?? this.freshWireName(entry, tool);
    await this.pins.pin(name, [{ tool, hash, wireName: wire }]);
    const action = wire.slice(name.replace(/-/g, '_').length + 1);
    for (const grant of this.grants.list()) if (grant.plugin === pluginIdOf(name) && grant.action === action) await this.grants.revoke(grant.id);
    await this.refresh(entry);
  }

  async close(): Promise<void> {
    for (const entry of this.entries.values()) {
      entry.closed = true;
      clearTimeout(entry.timer);
      this.registry.removePlugin(pluginIdOf(entry.server.name));
      await entry.server.close();
    }
  }

  private entryFor(client: typeof import('./external-server.js'), name: string, settings: ExternalMcpServer): ServerEntry {
    const server = new client.ExternalServer(name, settings, this.env, this.log.child(pluginIdOf(name)));
    const entry: ServerEntry = { server, endpoint: client.describeEndpoint(settings), state: settings.enabled === false ? 'disabled' : 'failed', tools: [], pending: [], refused: [], reconnects: 0, generation: 0 };
    this.entries.set(name, entry);
    return entry;
  }

  /** Connects; false (reported, and retried later) when the server cannot be reached. */
  private async connectOnly(entry: ServerEntry): Promise<boolean> {
    if (this.pins.problem) {
      this.fail(entry, new Error(this.pins.problem));
      return false;
    }
    try {
      await entry.server.connect(() => void this.refresh(entry), () => this.lost(entry));
      if (entry.closed) {
        await entry.server.close();
        return false;
      }
      entry.connectedAt = Date.now();
      entry.generation++;
      return true;
    } catch (error) {
      this.fail(entry, error);
      this.reconnectLater(entry);
      return false;
    }
  }

  /** The connection dropped after it was up: tools go at once, and reconnection is tried with backoff. */
  private lost(entry: ServerEntry): void {
    if (entry.closed) return;
    // Backoff starts over only for a server that stayed up a while; one that crashes at once backs off.
    if (entry.connectedAt !== undefined && Date.now() - entry.connectedAt > STABLE_MS) entry.reconnects = 0;
    this.fail(entry, new Error('the server closed the connection'));
    this.reconnectLater(entry);
  }

  private reconnectLater(entry: ServerEntry): void {
    if (entry.closed || entry.timer) return;
    const delay = Math.min(MAX_RECONNECT_DELAY_MS, 1_000 * 2 ** Math.min(entry.reconnects++, 20));
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (entry.closed || entry.state !== 'failed') return;
      void this.connectOnly(entry).then((connected) => (connected ? this.refresh(entry) : undefined));
    }, delay);
    entry.timer.unref();
  }

  private fail(entry: ServerEntry, error: unknown): void {
    entry.state = 'failed';
    entry.error = error instanceof Error ? error.message : String(error);
    this.registry.removePlugin(pluginIdOf(entry.server.name));
    this.log.warn('external MCP server unavailable', { server: entry.server.name, error: entry.error });
  }

  /** One refresh at a time per server; a list_changed during one runs another right after. */
  private refresh(entry: ServerEntry, listed?: Promise<ToolListing>): Promise<void> {
    if (entry.refreshing) {
      entry.again = true;
      return entry.refreshing;
    }
    entry.refreshing = (async () => {
      try {
        let first = listed;
        do {
          entry.again = false;
          await this.refreshOnce(entry, first);
          first = undefined;
        } while (entry.again);
      } catch (error) {
        this.fail(entry, error);
        this.reconnectLater(entry);
      } finally {
        entry.refreshing = undefined;
      }
    })();
    return entry.refreshing;
  }

  /** Lists the server's tools, checks each against its pin, and replaces the server's actions at once. */
  /** `listed`: the server's tools already being listed (at start). */
  private async refreshOnce(entry: ServerEntry, listed?: Promise<ToolListing>): Promise<void> {
    const { server } = entry;
    entry.generation++;
    const listing = await (listed ?? server.listTools());
    const { tools } = listing;
    const firstSight = !this.pins.known(server.name);
    const actions: RegisteredAction[] = [];
    const offered: ServerEntry['tools'] = [];
    const pending: Pending[] = [];
    const refused: ServerEntry['refused'] = [...listing.refused];
    const toPin: { tool: string; hash: string; wireName: string }[] = [];
    const seen = new Set<string>();
    for (const tool of tools) {
      if (!TOOL_NAME.test(tool.name) || seen.has(tool.name)) {
        refused.push({ name: tool.name.slice(0, 128), reason: seen.has(tool.name) ? 'listed twice' : 'its name is not [A-Za-z0-9_.-]{1,128}' });
        continue;
      }
      seen.add(tool.name);
      const hash = definitionHash(tool);
      const pin = this.pins.get(server.name, tool.name);
      let wire = pin?.wireName;
      if (!pin) {
        if (!firstSight) {
          pending.push({ name: tool.name, reason: 'new', hash, definition: tool });
          continue;
        }
        wire = this.freshWireName(entry, tool.name, toPin.map((entry) => entry.wireName));
        toPin.push({ tool: tool.name, hash, wireName: wire });
      } else if (pin.hash !== hash) {
        pending.push({ name: tool.name, reason: 'changed', hash, definition: tool });
        continue;
      }
      const action = this.toAction(server, tool, wire!, hash);
      if (typeof action === 'string') refused.push({ name: tool.name, reason: action });
      else {
        actions.push(action);
        offered.push({ name: tool.name, wireName: action.wireName, hash, effects: action.effects });
      }
    }
    // Pinned even when empty: from now on a tool that appears waits for a person.
    if (toPin.length > 0 || firstSight) await this.pins.pin(server.name, toPin);
    // The connection may have dropped while pins were written: then its tools must not come back.
    if (!server.isConnected || entry.closed) return;
    this.registry.replacePlugin(pluginIdOf(server.name), actions);
    Object.assign(entry, { tools: offered, pending, refused, state: 'connected' as const, manifest: manifestOf(server.name, actions.map((action) => action.spec), actions.map((action) => action.action)) });
    delete entry.error;
    if (pending.length > 0) this.log.warn('external MCP tools wait for approval', { server: server.name, tools: pending.map((tool) => `${tool.name} (${tool.reason})`) });
  }

  /**
   * A wire name for a tool that has none yet: its sanitised name, or, when another tool of this server
   * (pinned, or being pinned now) holds that, the name with a suffix from the hash of the raw name,
   * so that the outcome never depends on list order.
   */
  private freshWireName(entry: ServerEntry, tool: string, taking: readonly string[] = []): string {
    const prefix = entry.server.name.replace(/-/g, '_');
    // Action names are at most 48 characters (the manifest's rule) and the wire name at most 64.
    const base = tool.toLowerCase().replace(/[^a-z0-9_]/g, '_').replace(/^([^a-z])/, 't_$1').slice(0, Math.min(48, 63 - prefix.length));
    const own = this.pins.get(entry.server.name, tool)?.wireName;
    const held = new Set([...this.pins.allWireNames()].filter((wire) => wire !== own).concat(taking));
    for (const action of this.registry.list()) if (action.pluginId !== pluginIdOf(entry.server.name)) held.add(action.wireName);
    const plain = wireName(prefix, base);
    if (!held.has(plain)) return plain;
    const suffix = createHash('sha256').update(tool).digest('hex').slice(0, 8);
    return wireName(prefix, `${base.slice(0, Math.min(39, 54 - prefix.length))}_${suffix}`);
  }

  /**
   * The action for one tool, or why it cannot be offered. The tool becomes a one-action manifest that
   * goes through the same validation as a plugin's (names, effects, schemas compiled the same way).
   */
  private toAction(server: ExternalServer, tool: Tool, wire: string, hash: string): RegisteredAction | string {
    const pluginId = pluginIdOf(server.name);
    const toolName = server.name.replace(/-/g, '_');
    if (!isValidWireName(wire)) return `no wire name fits '${tool.name}'`;
    // The schema goes with every model request that offers the tool: one server's 700 KB schema was
    // about 200,000 tokens in each (its description is cut at 4,096 characters).
    const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema));
    if (schemaBytes > MAX_INPUT_SCHEMA_BYTES) return `its input schema is ${Math.ceil(schemaBytes / 1024)} KiB, more than ${MAX_INPUT_SCHEMA_BYTES / 1024} KiB (it is sent with every model request)`;
    const holder = this.registry.get(wire);
    if (holder && holder.pluginId !== pluginId) return `its name '${wire}' is taken by plugin '${holder.pluginId}'`;
    const key = `${hash}\u0000${wire}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      const imported = importEffects(tool.annotations, { remote: server.remote, trusted: server.config.trusted === true, ...(server.config.costs !== undefined ? { costs: server.config.costs } : {}) });
      // Servers announce other JSON Schema dialects; the schema itself is what validates.
      const { $schema: _dialect, ...input } = tool.inputSchema as Record<string, unknown>;
      const spec: ActionManifest = {
        description: (tool.description || tool.title || tool.name).slice(0, 4096), input: { ...input, type: 'object' },
        effects: imported.effects, ...(imported.destructive && imported.effects.length > 0 ? { destructive: true } : {}), ...(imported.idempotent ? { idempotent: true } : {}),
      };
      const validation = validateManifest(manifestOf(server.name, [spec], [wire.slice(toolName.length + 1)]), { file: `quire.json#/mcp/servers/${server.name}` });
      if (!validation.ok) return validation.issues.map((issue) => `${issue.pointer}: ${issue.message}`).join('; ');
      compiled = validation.value.actions[0]!;
      this.compiled.set(key, compiled);
    }
    const { spec } = compiled;
    return {
      pluginId, source: 'mcp', trusted: server.config.trusted === true, tool: toolName, action: compiled.action, wireName: compiled.wireName,
      spec, declaredEffects: spec.effects, effects: spec.effects, validateInput: compiled.validateInput, validateOutput: undefined,
      handler: (input, call) => server.call(tool.name, input, call),
      log: this.log.child(pluginId), externalName: tool.name,
      // The server's limit is the action's, kept by the pipeline (504, stillRunning), not only the SDK's.
      ...(server.config.timeoutMs !== undefined ? { timeoutMs: server.config.timeoutMs } : {}),
    };
  }
}

/**
 * The manifest an external server's tools make: one tool named after the server, one action per MCP
 * tool. No code is loaded from its entry: the kernel's own MCP client answers for the tools.
 */
function manifestOf(server: string, specs: readonly ActionManifest[], actions: readonly string[]): PluginManifest {
  return {
    id: pluginIdOf(server), version: '1.0.0', kernel: '*', description: `Tools of the external MCP server '${server}'`, entry: 'mcp-client.js',
    tools: [{ name: server.replace(/-/g, '_'), description: `Tools of the external MCP server '${server}'`, actions: Object.fromEntries(actions.map((action, index) => [action, specs[index]!])) }],
  };
}
