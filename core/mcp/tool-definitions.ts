import type { Tool } from '@modelcontextprotocol/sdk/types.js';
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

/** Whether an action is offered over MCP: agent-only tools are not. */
export function servedOverMcp(action: RegisteredAction): boolean {
  return action.spec.agentOnly !== true;
}

/** One MCP tool per action, named by its wire name, in a stable order. */
export function toolDefinitions(registry: ActionRegistry): Tool[] {
  return registry.list().filter(servedOverMcp).sort((a, b) => a.wireName.localeCompare(b.wireName)).map((action) => {
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
