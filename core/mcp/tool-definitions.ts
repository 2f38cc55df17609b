import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { KernelConfig } from '../config/kernel-config.js';
import type { ActionRegistry, RegisteredAction } from '../registry/action-registry.js';

/**
 * MCP annotations from our effects, all four always explicit (PROTOCOLS.md §1.5): MCP's defaults are
 * the pessimistic ones, and a client must not have to guess which of ours were meant.
 */
export function annotationsOf(action: RegisteredAction): NonNullable<Tool['annotations']> {
  const { effects } = action;
  return {
    readOnlyHint: effects.length === 0,
    destructiveHint: effects.includes('localWrite') && action.spec.destructive === true,
    idempotentHint: action.spec.idempotent === true,
    openWorldHint: effects.includes('dataEgress') || effects.includes('externalCost'),
  };
}

/**
 * Whether an action is offered over MCP: agent-only tools are not, and neither are an external MCP
 * server's. Quire is not a relay: an MCP client could otherwise drive a third-party server through the
 * kernel with none of the confirmations the agent needs. A trusted server may be opted in
 * (`mcp.servers.<name>.serveOverMcp`); trust is checked here too, whatever configuration was handed in.
 */
export function servedOverMcp(action: RegisteredAction, config: Pick<KernelConfig, 'mcp'>): boolean {
  if (action.spec.agentOnly === true || action.spec.personOnly === true) return false;
  if (action.source !== 'mcp') return true;
  const settings = new Map(Object.entries(config.mcp.servers)).get(action.pluginId.replace(/^mcp-/, ''));
  return settings?.serveOverMcp === true && settings.trusted === true;
}

/**
 * One MCP tool per action, named by its wire name, in a stable order; as for the agent, not those that
 * cannot work now (a semantic search with no embedder selected: every call answered 503). A backend
 * coming or going tells the clients the list changed, as actions added or removed do (mcp-endpoint.ts).
 */
export function toolDefinitions(registry: ActionRegistry, config: Pick<KernelConfig, 'mcp'>): Tool[] {
  return registry.list().filter((action) => servedOverMcp(action, config) && action.unavailable?.() === undefined).sort((a, b) => a.wireName.localeCompare(b.wireName)).map((action) => {
    const output = action.spec.output;
    return {
      name: action.wireName,
      description: action.spec.description,
      inputSchema: { ...action.spec.input, type: 'object' } as Tool['inputSchema'],
      // Declared only for object results: MCP's structured content must be an object.
      ...(output && output.type === 'object' ? { outputSchema: { ...output, type: 'object' } as Tool['outputSchema'] } : {}),
      annotations: annotationsOf(action),
    };
  });
}
