import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsResultSchema, ToolListChangedNotificationSchema, ToolSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ExternalMcpServer } from '../../config/kernel-config.js';
import { KernelError, isKernelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { KERNEL_VERSION } from '../../paths.js';
import type { ActionCall } from '../../plugin-api.js';
import { boundedFetch, isMessageTooLarge } from './bounded-fetch.js';
import { foreignOutputValidator } from './output-validator.js';

/** At most this many tools are taken from one server (pages of tools/list are read until then). */
const MAX_TOOLS = 256;
const MAX_PAGES = 20;
const CONNECT_TIMEOUT_MS = 15_000;
/** A tool call's limit left to the action's signal: the SDK is given a day (its timer needs some number). */
const NO_SDK_LIMIT_MS = 86_400_000;
/** Listing a server's tools, all pages together, may take this long. */
const LIST_TIMEOUT_MS = 30_000;

/** A server's tools as listed: those taken, and what was left out and why. */
export interface ToolListing {
  tools: Tool[];
  refused: { name: string; reason: string }[];
}

/**
 * A page of tools/list checked only for its shape (an object with a `tools` array): each tool is then
 * checked alone. The SDK takes any schema with `safeParse` (its Zod 3 path).
 */
const LOOSE_TOOL_PAGE = {
  safeParse(data: unknown): { success: true; data: { tools: unknown[]; nextCursor?: unknown } } | { success: false; error: Error } {
    const page = data as { tools?: unknown } | null;
    if (typeof page === 'object' && page !== null && Array.isArray(page.tools)) return { success: true, data: page as { tools: unknown[]; nextCursor?: unknown } };
    return { success: false, error: new Error('tools/list answered no tools array') };
  },
} as unknown as typeof ListToolsResultSchema;

const nameOf = (tool: unknown): string => {
  const name = (tool as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name.slice(0, 128) : '(no name)';
};

/** How a server is shown to people: the exact command for stdio, the URL (never header values) for HTTP. */
export function describeEndpoint(config: ExternalMcpServer): Record<string, unknown> {
  if ('command' in config) return { transport: 'stdio', command: [config.command, ...(config.args ?? [])], ...(config.cwd ? { cwd: config.cwd } : {}), env: Object.keys(config.env ?? {}) };
  return { transport: 'http', url: shownUrl(config.url), headers: [...Object.keys(config.headers ?? {}), ...Object.keys(config.headersFromEnv ?? {})], oauth: config.oauth !== undefined };
}

/**
 * A server's URL as listed and logged: a user name, password, query and fragment are secrets as often
 * as not (hosted MCP servers take a key as `?api_key=`), so they are replaced by `***`.
 */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(not a URL)';
  }
  if (parsed.username) parsed.username = '***';
  if (parsed.password) parsed.password = '***';
  // The whole query and fragment: a key may stand alone (`?SECRET`) or sit in the fragment.
  if (parsed.search) parsed.search = '***';
  if (parsed.hash) parsed.hash = '***';
  return parsed.href.replace(/%2A%2A%2A/g, '***');
}

/**
 * One connected external MCP server. Our own tokens are never forwarded: the HTTP transport sends only
 * the headers quire.json gives for this server (values from the environment where named).
 */
export class ExternalServer {
  private client: Client | undefined;
  /** Requests under way, aborted when a message of the server passes the size bound. */
  private readonly underWay = new Map<AbortController, { method: string; marker?: string }>();
  /** Marks each call's request (`_meta`), so that a cut-off stream aborts the call it answered only. */
  private calls = 0;

  constructor(readonly name: string, readonly config: ExternalMcpServer, private readonly env: NodeJS.ProcessEnv, private readonly log: Logger) {}

  get isConnected(): boolean {
    return this.client !== undefined;
  }

  get remote(): boolean {
    return 'url' in this.config;
  }

  async connect(onToolsChanged: () => void, onClosed: () => void): Promise<void> {
    await this.close();
    const client = new Client({ name: 'quire', version: KERNEL_VERSION }, { jsonSchemaValidator: foreignOutputValidator });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged());
    const transport = this.transport();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.connect(transport),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS); }),
      ]);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.client = client;
    // A server that exits or drops the connection later: its tools go, and the owner reconnects.
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      onClosed();
    };
  }

  /**
   * The server's tools: at most MAX_TOOLS, MAX_PAGES pages and LIST_TIMEOUT_MS, whatever the server sends.
   * Each tool is checked alone: one malformed tool made the SDK's check of the whole page fail, and the
   * server with it. What is left out (malformed, past the bounds) is said in `refused`.
   */
  async listTools(): Promise<ToolListing> {
    const client = this.connected();
    const overflow = this.watchOverflow({ method: 'tools/list' });
    const signal = AbortSignal.any([AbortSignal.timeout(LIST_TIMEOUT_MS), overflow.signal]);
    try {
      const listing = await this.listPages(client, signal);
      // The SDK checks structured answers against the tools' output schemas it holds: all pages' tools at
      // once (its listTools replaced them at each page, so only the last page's were checked).
      (client as unknown as { cacheToolMetadata(tools: Tool[]): void }).cacheToolMetadata(listing.tools);
      return listing;
    } finally {
      overflow.done();
    }
  }

  private async listPages(client: Client, signal: AbortSignal): Promise<ToolListing> {
    const tools: Tool[] = [];
    const refused: ToolListing['refused'] = [];
    let cursor: string | undefined;
    let more = 0;
    let pages = 0;
    for (; pages < MAX_PAGES; pages++) {
      const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, LOOSE_TOOL_PAGE, { signal, timeout: LIST_TIMEOUT_MS });
      // One at a time, to the bound (a spread of a page of 200,000 tools overflowed the stack).
      for (const raw of page.tools) {
        if (tools.length >= MAX_TOOLS) { more++; continue; }
        const checked = ToolSchema.safeParse(raw);
        if (checked.success) tools.push(checked.data);
        else refused.push({ name: nameOf(raw), reason: `not a valid MCP tool: ${checked.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(the tool)'}: ${issue.message}`).join('; ')}` });
      }
      cursor = typeof page.nextCursor === 'string' && page.nextCursor !== '' ? page.nextCursor : undefined;
      if (!cursor || tools.length >= MAX_TOOLS) break;
    }
    if (more > 0 || cursor !== undefined) {
      const left = [more > 0 ? `${more} more tool(s) not taken` : '', cursor === undefined ? '' : tools.length >= MAX_TOOLS ? 'pages not read' : `pages after the ${MAX_PAGES}th not read`];
      refused.push({ name: '(more tools)', reason: `${left.filter((part) => part !== '').join(', and ')}: at most ${MAX_TOOLS} tools and ${MAX_PAGES} pages are taken from one server` });
    }
    return { tools, refused };
  }

  /** Calls a tool with the action's signal and time limit; an error result becomes a PLUGIN_ERROR. */
  async call(tool: string, input: unknown, call: ActionCall): Promise<unknown> {
    const marker = String(++this.calls);
    const overflow = this.watchOverflow({ method: 'tools/call', marker });
    let result: CallToolResult;
    try {
      result = await this.connected().callTool({ name: tool, arguments: input as Record<string, unknown>, _meta: { [CALL_MARK]: marker } }, undefined, {
        signal: AbortSignal.any([call.signal, overflow.signal]),
        // The action's limit is the server's `timeoutMs` or actions.timeoutMs, kept by the pipeline (the
        // signal above): the SDK's own timer must not end the call first (its default of 60 s, or the same
        // limit a moment earlier, answered PLUGIN_ERROR 500 without saying the tool may still run).
        timeout: NO_SDK_LIMIT_MS,
      }) as CallToolResult;
    } catch (error) {
      // Aborted for a cut-off stream: its reason as it is (the SDK wraps it in an error of its own).
      if (overflow.signal.aborted) throw overflow.signal.reason;
      // Stopped by the action's limit or a cancel: said as such (it was a PLUGIN_ERROR 500 wrapping the
      // SDK's error). The server was told to stop, which it may not: what it did is unknown.
      if (call.signal.aborted && isKernelError(call.signal.reason)) {
        const reason = call.signal.reason;
        throw new KernelError(reason.code, `${reason.message}; the server was told to stop, and what the call did there is unknown: check before retrying`, { details: { ...reason.details, server: this.name, stillRunning: true } });
      }
      // A JSON answer past the bound: the tool ran, what it answered is not known.
      if (isMessageTooLarge(error)) throw this.outcomeUnknown(error as Error);
      throw error;
    } finally {
      overflow.done();
    }
    const text = (result.content ?? []).filter((part) => part.type === 'text').map((part) => (part as { text: string }).text).join('\n');
    if (result.isError) throw new KernelError('PLUGIN_ERROR', `${this.name}/${tool}: ${text.slice(0, 2_000) || 'the tool reported an error'}`, { details: { server: this.name, tool } });
    return result.structuredContent ?? { content: result.content ?? [] };
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close().catch((error: unknown) => this.log.warn('mcp server close failed', { server: this.name, error: String(error) }));
  }

  /**
   * A request's way to learn that a message past the bound was cut off (bounded-fetch.ts): the SDK takes
   * the POST's event stream that errors for a lost connection and waits on, so the requests that POST
   * carried (by method and the call's mark) are aborted, as of unknown outcome: the server may have acted.
   */
  private watchOverflow(request: { method: string; marker?: string }): { signal: AbortSignal; done(): void } {
    const controller = new AbortController();
    this.underWay.set(controller, request);
    return { signal: controller.signal, done: () => this.underWay.delete(controller) };
  }

  private overflowed(error: Error, init: RequestInit | undefined): void {
    this.log.warn('an MCP server sent a message past the size bound', { server: this.name, error: error.message });
    const sent = postedRequests(init);
    const unknown = this.outcomeUnknown(error);
    for (const [controller, request] of this.underWay) {
      if (sent.some((posted) => posted.method === request.method && posted.marker === request.marker)) controller.abort(unknown);
    }
  }

  private outcomeUnknown(error: Error): KernelError {
    return new KernelError('PLUGIN_ERROR', `${this.name}: ${error.message}; what the call did on the server is unknown: check before retrying`, { details: { server: this.name, stillRunning: true } });
  }

  private connected(): Client {
    if (!this.client) throw new KernelError('NOT_READY', `the MCP server '${this.name}' is not connected`, { details: { server: this.name } });
    return this.client;
  }

  private transport(): Transport {
    const { config } = this;
    if ('command' in config) {
      // The child gets the environment quire.json gives, not the kernel's (which may hold keys).
      const stdio = new StdioClientTransport({ command: config.command, args: config.args ?? [], env: { PATH: this.env.PATH ?? '', ...config.env }, ...(config.cwd ? { cwd: config.cwd } : {}), stderr: 'pipe' });
      // Drained, or a chatty server would block on a full pipe; kept at debug level, bounded per chunk.
      stdio.stderr?.on('data', (chunk: Buffer) => this.log.debug('mcp server stderr', { server: this.name, text: String(chunk).slice(0, 2_000) }));
      return stdio;
    }
    const headers: Record<string, string> = { ...config.headers };
    for (const [header, variable] of Object.entries(config.headersFromEnv ?? {})) {
      const value = this.env[variable];
      if (value === undefined) throw new KernelError('CONFIG_INVALID', `mcp.servers.${this.name}.headersFromEnv.${header}: the environment variable ${variable} is not set`, { details: { server: this.name, variable } });
      headers[header] = value;
    }
    const oauth = config.oauth;
    let authProvider: ClientCredentialsProvider | undefined;
    if (oauth) {
      const secret = this.env[oauth.clientSecretEnv];
      if (secret === undefined) throw new KernelError('CONFIG_INVALID', `mcp.servers.${this.name}.oauth.clientSecretEnv: the environment variable ${oauth.clientSecretEnv} is not set`, { details: { server: this.name } });
      authProvider = new ClientCredentialsProvider({ clientId: oauth.clientId, clientSecret: secret, expectedIssuer: oauth.issuer, ...(oauth.scope ? { scope: oauth.scope } : {}) });
    }
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers }, fetch: boundedFetch((error, init) => this.overflowed(error, init)), ...(authProvider ? { authProvider } : {}) });
  }
}

const CALL_MARK = 'quire/call';

/** The JSON-RPC requests a POST carried (one, or a batch), by method and the call's mark. */
function postedRequests(init: RequestInit | undefined): { method: string; marker?: string }[] {
  if (typeof init?.body !== 'string') return [];
  try {
    const body = JSON.parse(init.body) as unknown;
    return (Array.isArray(body) ? body : [body]).filter((message): message is { method: string; params?: { _meta?: Record<string, unknown> } } => typeof (message as { method?: unknown })?.method === 'string')
      .map((message) => {
        const marker = message.params?._meta?.[CALL_MARK];
        return { method: message.method, ...(typeof marker === 'string' ? { marker } : {}) };
      });
  } catch {
    return [];
  }
}
