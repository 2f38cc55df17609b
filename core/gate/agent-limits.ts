import { KernelError, NotFoundError } from '../errors.js';
import type { RegisteredAction } from '../registry/action-registry.js';
import type { AgentLimit } from './notebook-scope.js';

const NO_NOTEBOOKS: ReadonlySet<string> = new Set();
export const NO_AGENT_LIMITS: ReadonlyMap<string, AgentLimit> = new Map();

export function limitedTo(limit: AgentLimit, limits: ReadonlyMap<string, AgentLimit>): ReadonlySet<string> {
  if (limits.size === 0) return NO_NOTEBOOKS;
  const out = new Set<string>();
  for (const [notebook, value] of limits) if (value === limit) out.add(notebook);
  return out.size > 0 ? out : NO_NOTEBOOKS;
}

/**
 * A notebook's privacy, before any grant or mode is looked at: a call of the agent that names something
 * in a notebook closed to it (`agent: none`) is answered as if nothing by that id existed; a write
 * into one it may only read (`agent: read`) is refused, saying so. Reads that span notebooks leave the
 * closed ones out through the call's deniedNotebooks.
 */
export function checkAgentLimits(entry: RegisteredAction, notebooks: readonly string[], limits: ReadonlyMap<string, AgentLimit>): void {
  if (limits.size === 0 || notebooks.length === 0) return;
  if (notebooks.some((notebook) => limits.get(notebook) === 'none')) {
    throw new NotFoundError('NOT_FOUND', `${entry.wireName}: nothing with the id given exists`, { details: { action: entry.wireName } });
  }
  const readOnly = notebooks.find((notebook) => limits.get(notebook) === 'read');
  if (readOnly !== undefined && entry.effects.includes('localWrite') && entry.spec.changesNotes !== false) {
    throw new KernelError('ACTION_DENIED', `${entry.wireName} would change notebook '${readOnly}', which the agent may only read (its privacy setting is agent: read; a person can change it)`, {
      details: { action: entry.wireName, notebook: readOnly, privacy: 'read' },
    });
  }
}
