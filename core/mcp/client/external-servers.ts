import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import type { ExternalMcpServer, KernelConfig } from '../../config/kernel-config.js';
import { ConflictError, KernelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { isValidWireName, wireName } from '../../manifest/wire-name.js';
import type { ActionRegistry, RegisteredAction } from '../../registry/action-registry.js';
import { createAjv } from '../../schema/ajv.js';
import { importEffects } from './external-effects.js';
import { describeEndpoint, ExternalServer } from './external-server.js';
import { definitionHash, ToolPins } from './tool-pins.js';

export type ServerState = 'connected' | 'failed' | 'disabled';

interface ServerEntry {
  server: ExternalServer;
  state: ServerState;
  error?: string;
  /** Tools offered as actions, by action name. */
  tools: { name: string; wireName: string; hash: string; effects: readonly string[] }[];
  /** Tools whose definition changed since it was pinned: disabled until approved. */
  changed: { name: string; hash: string; pinned: string }[];
  /** Tools that could not be offered (a schema that does not compile, a name that does not fit). */
  refused: { name: string; reason: string }[];
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
  changed: ServerEntry['changed'];
  refused: ServerEntry['refused'];
}

/** The plugin id an external server's tools are registered under. */
export const pluginIdOf = (name: string) => `mcp-${name}`;

/**
 * External MCP servers as plugins (DESIGN.md §4): connected at boot (a failing one is reported, never
 * fatal), their tools pinned by definition hash and registered as actions with effects from their
 * annotations, so they pass the same gate, snapshot rule, audit and time limits as native actions.
 */
export class ExternalMcpServers {
  private readonly entries = new Map<string, ServerEntry>();
  private readonly ajv = createAjv({ strict: false });

  constructor(private readonly config: KernelConfig, private readonly registry: ActionRegistry, private readonly pins: ToolPins, private readonly env: NodeJS.ProcessEnv, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.pins.load();
    await Promise.all(Object.entries(this.config.mcp.servers).map(([name, settings]) => this.startOne(name, settings)));
  }

  /** What GET /api/plugins and GET /api/mcp/servers show. */
  describe(): ServerDescription[] {
    return [...this.entries.values()].map((entry) => ({
      id: pluginIdOf(entry.server.name), name: entry.server.name, source: 'mcp', state: entry.state, trusted: entry.server.config.trusted === true,
      endpoint: describeEndpoint(entry.server.config),
      ...(entry.error ? { error: entry.error } : {}),
      tools: entry.tools, changed: entry.changed, refused: entry.refused,
    }));
  }

  /** A person accepts a tool's changed definition: it is pinned anew and offered again. */
  async approve(name: string, tool: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw new KernelError('NOT_FOUND', `no external MCP server named '${name}'`, { details: { server: name } });
    const change = entry.changed.find((candidate) => candidate.name === tool);
    if (!change) throw new ConflictError('CONFLICT', `the tool '${tool}' of '${name}' has no changed definition waiting for approval`, { details: { server: name, tool } });
    await this.pins.pin(name, tool, change.hash);
    await this.refresh(entry);
  }

  async close(): Promise<void> {
    for (const entry of this.entries.values()) {
      this.registry.removePlugin(pluginIdOf(entry.server.name));
      await entry.server.close();
    }
  }

  private async startOne(name: string, settings: ExternalMcpServer): Promise<void> {
    const server = new ExternalServer(name, settings, this.env, this.log.child(pluginIdOf(name)));
    const entry: ServerEntry = { server, state: settings.enabled === false ? 'disabled' : 'failed', tools: [], changed: [], refused: [] };
    this.entries.set(name, entry);
    if (settings.enabled === false) return;
    try {
      await server.connect(() => void this.refresh(entry).catch((error: unknown) => this.fail(entry, error)));
      entry.state = 'connected';
      await this.refresh(entry);
    } catch (error) {
      this.fail(entry, error);
    }
  }

  private fail(entry: ServerEntry, error: unknown): void {
    entry.state = 'failed';
    entry.error = error instanceof Error ? error.message : String(error);
    this.registry.removePlugin(pluginIdOf(entry.server.name));
    this.log.warn('external MCP server unavailable', { server: entry.server.name, error: entry.error });
  }

  /** Lists the server's tools, checks each against its pin, and replaces the server's actions at once. */
  private async refresh(entry: ServerEntry): Promise<void> {
    const { server } = entry;
    const tools = await server.listTools();
    const actions: RegisteredAction[] = [];
    entry.tools = [];
    entry.changed = [];
    entry.refused = [];
    const used = new Set<string>();
    for (const tool of tools) {
      const hash = definitionHash(tool);
      const pinned = this.pins.get(server.name, tool.name);
      if (pinned === undefined) await this.pins.pin(server.name, tool.name, hash);
      else if (pinned !== hash) {
        entry.changed.push({ name: tool.name, hash, pinned });
        continue;
      }
      const action = this.toAction(server, tool, used);
      if (typeof action === 'string') entry.refused.push({ name: tool.name, reason: action });
      else {
        actions.push(action);
        entry.tools.push({ name: tool.name, wireName: action.wireName, hash, effects: action.effects });
      }
    }
    this.registry.removePlugin(pluginIdOf(server.name));
    this.registry.addAll(actions);
    if (entry.changed.length > 0) this.log.warn('external MCP tools changed; disabled until approved', { server: server.name, tools: entry.changed.map((tool) => tool.name) });
  }

  /** The action for one tool, or why it cannot be offered. */
  private toAction(server: ExternalServer, tool: Tool, used: Set<string>): RegisteredAction | string {
    const toolName = server.name.replace(/-/g, '_');
    let action = tool.name.toLowerCase().replace(/[^a-z0-9_]/g, '_').replace(/^([^a-z])/, 't_$1').slice(0, 63 - toolName.length);
    for (let n = 2; used.has(action); n++) action = `${action.slice(0, 60 - toolName.length)}_${n}`;
    const name = wireName(toolName, action);
    if (!isValidWireName(name)) return `no wire name fits '${tool.name}'`;
    let validateInput: ValidateFunction;
    try {
      validateInput = this.ajv.compile({ ...tool.inputSchema, type: 'object' });
    } catch (error) {
      return `its input schema does not compile: ${(error as Error).message}`;
    }
    used.add(action);
    const imported = importEffects(tool.annotations, { remote: server.remote, trusted: server.config.trusted === true, ...(server.config.costs !== undefined ? { costs: server.config.costs } : {}) });
    const log = this.log.child(pluginIdOf(server.name));
    return {
      pluginId: pluginIdOf(server.name), source: 'mcp', trusted: server.config.trusted === true, tool: toolName, action, wireName: name,
      spec: { description: (tool.description ?? tool.title ?? tool.name).slice(0, 4096), input: tool.inputSchema, effects: imported.effects, destructive: imported.destructive, idempotent: imported.idempotent },
      declaredEffects: imported.effects, effects: imported.effects, validateInput, validateOutput: undefined,
      handler: (input, call) => server.call(tool.name, input, call),
      log,
    };
  }
}
