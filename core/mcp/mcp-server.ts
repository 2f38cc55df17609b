import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { isKernelError } from '../errors.js';
import { wholeCharacterEnd } from '../util/code-points.js';
import type { Kernel } from '../kernel.js';
import { KERNEL_VERSION } from '../paths.js';
import type { Principal, ProgressUpdate } from '../plugin-api.js';
import { servedOverMcp, toolDefinitions } from './tool-definitions.js';
import { serveResources } from './mcp-resources.js';
import { heldBackFromMcp, MCP_WITHHELD, MCP_WITHHELD_DONE, MCP_WITHHELD_ERROR } from './mcp-egress.js';
import { failedCallOf } from '../pipeline/prepared-call.js';
import { servePrompts } from './mcp-prompts.js';

/**
 * An MCP server for one client session: tools/list from the registry as it is now, tools/call through
 * the action pipeline as the MCP caller (validated, role-checked, audited). A failing call is an
 * `isError` result, never a protocol error, so the client's model can read what went wrong.
 */
export function createMcpServer(kernel: Kernel, principal: Principal): Server {
  const server = new Server({ name: 'quire', version: KERNEL_VERSION }, { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} } });
  // The caller, named with the client program it connected as (audit, provenance).
  const caller = (): Principal => {
    const client = server.getClientVersion()?.name;
    return client ? { ...principal, client: client.slice(0, 100) } : principal;
  };
  const stopWatching = serveResources(server, kernel, caller);
  servePrompts(server, kernel, caller);
  const closing = server.onclose;
  server.onclose = () => { stopWatching(); closing?.(); };
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolDefinitions(kernel.registry, kernel.config) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const entry = kernel.registry.get(name);
    if (!entry || !servedOverMcp(entry, kernel.config)) return failure('ACTION_NOT_FOUND', `no tool named '${name.slice(0, 100)}'`);
    try {
      const progressToken = request.params._meta?.progressToken;
      // A client that sent a progress token hears each progress report (a long action's job, or any action that reports it).
      const onProgress = progressToken === undefined ? undefined : progressSender(progressToken, extra.sendNotification);
      const outcome = await kernel.pipeline.call({ target: name, input: request.params.arguments ?? {}, principal: caller(), signal: extra.signal, ownsInput: true, ...(onProgress ? { onProgress } : {}) });
      // Only agent calls stop at a confirmation; an MCP caller is an administrator acting directly.
      const value = outcome.status === 'ok' ? outcome.value : null;
      // An error result: a tool's structured content must fit its output schema, and this is not its result.
      if (heldBackFromMcp(kernel, outcome.call)) {
        const changed = outcome.call.entry.effects.length > 0;
        return { content: [{ type: 'text', text: changed ? MCP_WITHHELD_DONE : MCP_WITHHELD }], isError: true, _meta: { 'quire/withheld': 'local-only', 'quire/ran': changed } };
      }
      return success(value);
    } catch (error) {
      // An error that names notes of a local-only notebook (a stale expectedUpdated told when the block
      // was last written) is held back as a result is: its code stays, its text and details do not.
      const failed = failedCallOf(error);
      // As for the agent's model (tool-batch.ts): a plugin's own error may quote any note, unless it said which.
      if (isKernelError(error) && failed !== undefined && (failed.returned.said || failed.entry.source !== 'native') && heldBackFromMcp(kernel, failed)) {
        const running = error.details?.stillRunning === true ? { stillRunning: true } : undefined;
        return { ...failure(error.code, MCP_WITHHELD_ERROR, running), _meta: { 'quire/withheld': 'local-only' } };
      }
      if (isKernelError(error)) return failure(error.code, error.message, error.details);
      kernel.log.error('mcp tool call failed', { tool: name, error: error instanceof Error ? error.message : String(error) });
      return failure('INTERNAL', 'the tool failed; the kernel log has the details');
    }
  });
  return server;
}

type SendNotification = (notification: ServerNotification) => Promise<void>;

/** `notifications/progress` for one call; the protocol wants progress to grow, so a report that does not is left out. */
function progressSender(progressToken: string | number, send: SendNotification): (update: ProgressUpdate) => void {
  let last = -1;
  return (update) => {
    if (update.done <= last) return;
    last = update.done;
    void send({ method: 'notifications/progress', params: { progressToken, progress: update.done, ...(update.total !== undefined ? { total: update.total } : {}), ...(update.message !== undefined ? { message: update.message } : {}) } }).catch(() => undefined);
  };
}

/**
 * The text a client's model reads, at most: a 10,000-block document went out as 7-11 MB of text (and
 * the same again as structured content), past any model's context. The structured content stays whole.
 */
export const MAX_MCP_TEXT = 100_000;

function success(value: unknown): CallToolResult {
  // Nothing returned is null, as in the text: `{ result: undefined }` went out as `{}`.
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { result: value ?? null };
  const text = JSON.stringify(value ?? null);
  const cut = wholeCharacterEnd(text, MAX_MCP_TEXT);
  const shown = text.length <= MAX_MCP_TEXT ? text
    : `${text.slice(0, cut)}\n\n[Answer cut: ${text.length} characters, the first ${MAX_MCP_TEXT} shown; the whole answer is in this result's structured content. Read less at once where a tool allows it: one block (block_get), a document's Markdown or a block's children a part at a time (document_get_markdown, block_get_children: offset and limit), a search page by page.]`;
  return { content: [{ type: 'text', text: shown }], structuredContent: structured };
}

function failure(code: string, message: string, details?: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}${details !== undefined ? `\n${JSON.stringify(details)}` : ''}` }] };
}
