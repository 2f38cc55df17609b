import type { DependencyContainer } from 'tsyringe';
import { KernelError } from '../errors.js';
import type { Effect, Principal } from '../plugin-api.js';
import { localOnlyNotebooks } from './egress-scope.js';
import { NOTEBOOK_SCOPE, type NotebookScope, type ScopedCall } from './notebook-scope.js';

/**
 * Whether a call of the agent or an MCP client touches a local-only notebook and one that is not (a
 * move, a copy), or writes a local-only notebook's notes out of the workspace (an export, which an import
 * could bring into another notebook): the notes could leave it, and a model off this machine read them.
 */
export function crossesLocalOnly(container: DependencyContainer, principal: Principal, notebooks: readonly string[], call: ScopedCall): boolean {
  if ((principal.kind !== 'agent' && principal.kind !== 'mcp') || notebooks.length === 0) return false;
  const localOnly = localOnlyNotebooks(container);
  if (!notebooks.some((notebook) => localOnly.has(notebook))) return false;
  if (notebooks.some((notebook) => !localOnly.has(notebook))) return true;
  // Out of the workspace (an export): nothing keeps the notes local there.
  return container.isRegistered(NOTEBOOK_SCOPE, true) && container.resolve<NotebookScope>(NOTEBOOK_SCOPE).leavesWorkspace?.(call) === true;
}

/**
 * The agent's crossing is asked every time (decide.ts); an MCP client's cannot be asked, so it is refused
 * unless the person lets local-only notes reach MCP clients anyway (`mcp.sendLocalOnly`): a client whose
 * reads of a local-only notebook were withheld moved the document out and read it whole.
 */
export function refuseMcpCrossing(wireName: string, effects: readonly Effect[], principal: Principal, crosses: boolean, sendLocalOnly: boolean): void {
  // A write only, as the agent's question: a search naming both notebooks copies nothing.
  if (!crosses || principal.kind !== 'mcp' || sendLocalOnly || !effects.includes('localWrite')) return;
  throw new KernelError('ACTION_DENIED', `${wireName} moves or copies notes between a notebook marked local-only and one that is not, or writes them out of the workspace; an MCP client cannot be asked, so it is refused (either way: which way notes go is not told apart). A person can do it, or set mcp.sendLocalOnly in quire.json`,
    { details: { action: wireName, reason: 'local_only_crossing' } });
}
