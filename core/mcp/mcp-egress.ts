import { localOnlyNotebooks } from '../gate/egress-scope.js';
import type { Kernel } from '../kernel.js';
import { notebooksInResult, type PreparedCall } from '../pipeline/prepared-call.js';

/** What an MCP client gets in place of notes it may not be sent. */
export const MCP_WITHHELD = '[withheld: this result holds notes of notebooks marked local-only (egress: local-only), which are not sent to MCP clients: their model may be off this machine. A person can set mcp.sendLocalOnly in quire.json to send them.]';

/**
 * The same for a call that changed something: it is answered as an error (a result must fit the tool's
 * output schema, and this is not its result), so it says plainly that the change was made, or a model
 * retries it and makes it twice.
 */
export const MCP_WITHHELD_DONE = '[done: the call ran and made its changes; do not call it again. Only its answer is withheld: it names notebooks marked local-only (egress: local-only), which are not sent to MCP clients. A person can set mcp.sendLocalOnly in quire.json to send them.]';

/** What an MCP client gets in place of an error's text that names notes it may not be sent. */
export const MCP_WITHHELD_ERROR = 'the call failed; its message is withheld: it names notes of a notebook marked local-only (egress: local-only), which are not sent to MCP clients. A person can set mcp.sendLocalOnly in quire.json to send them.';

/**
 * An MCP client (Claude Desktop, Cursor...) may send what it reads to a model anywhere: a result that
 * holds notes of a local-only notebook, or cannot say whose notes it holds while one exists, is held
 * back (the same rule as the agent's requests to a model off this machine), unless quire.json's
 * mcp.sendLocalOnly says the clients may have them.
 */
export function heldBackFromMcp(kernel: Kernel, call: Pick<PreparedCall, 'entry' | 'returned' | 'deniedNotebooks'>): boolean {
  if (kernel.config.mcp.sendLocalOnly) return false;
  const localOnly = localOnlyNotebooks(kernel.container);
  if (localOnly.size === 0) return false;
  // A native read that left every local-only notebook out (the pipeline's closedToMcp) holds none of their notes.
  if ([...localOnly].every((notebook) => call.deniedNotebooks.has(notebook))) return false;
  const notebooks = notebooksInResult(call);
  return notebooks === 'all' || notebooks.some((notebook) => localOnly.has(notebook));
}
