import type { DependencyContainer } from 'tsyringe';
import type { RegisteredAction } from '../registry/action-registry.js';
import type { Effect } from '../plugin-api.js';
import { limitedTo } from './agent-limits.js';
import { localOnlyNotebooks } from './egress-scope.js';
import type { AgentLimit } from './notebook-scope.js';

/**
 * What an MCP client's call leaves out: the notebooks closed to agents (`agent: none`), and for a native
 * read the local-only ones too, unless `mcp.sendLocalOnly`. Their notes never go to a client whose model
 * may be off this machine, so its reads leave them out as they leave out a closed notebook: a search
 * answered whole as "withheld" when a hit lay there and empty when none did, so a client could test
 * words against local-only notes, and any search touching one was lost. Writes into them go on as before.
 */
export function closedToMcp(entry: RegisteredAction, own: readonly Effect[], limits: ReadonlyMap<string, AgentLimit>, container: DependencyContainer, sendLocalOnly: boolean): ReadonlySet<string> {
  const closed = limitedTo('none', limits);
  // By the action's own effects: a search using a remote embedder or reranker is still a read.
  // An action that returns no notes (a schema, a status) has nothing to leave out.
  if (sendLocalOnly || entry.source !== 'native' || own.length > 0 || entry.spec.returnsNotes === false) return closed;
  const local = localOnlyNotebooks(container);
  return local.size === 0 ? closed : new Set([...closed, ...local]);
}
