import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { fetchNotingStream } from '../../helpers/mcp-client.js';

const ADMIN = 'qk_mcp-admin-token';
const READER = 'qk_mcp-reader-token';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: sha(ADMIN) }, { name: 'rita', role: 'reader', sha256: sha(READER) }] };

interface ListedAction { wireName: string; effects: string[]; destructive: boolean; idempotent: boolean; agentOnly: boolean; personOnly: boolean; unavailable?: string }

describe('the kernel as an MCP server on /mcp', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(config: KernelConfigFile = {}, userPlugins?: Record<string, UserPlugin>) {
    const kernel = await harness.boot({ realManifests: true, ...(userPlugins ? { userPlugins } : {}), config: { auth, ...config, plugins: { blocks: { config: { watch: false, welcome: false } }, ...config.plugins } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, url: server.url };
  }

  async function connect(url: string, token = ADMIN, fetch?: FetchLike, name = 'quire-test'): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, ...(fetch ? { fetch } : {}) }));
    clients.push(client);
    return client;
  }

  it('lists one tool per action, with all four annotations as the manifests declare, and no agent-only or person-only tools', async () => {
    const { url } = await serve();
    const client = await connect(url);
    const { tools } = await client.listTools();
    const listing = await rawRequest(`${url}/api/plugins`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const actions = (listing.json().plugins as { tools: { actions: ListedAction[] }[] }[]).flatMap((plugin) => plugin.tools.flatMap((tool) => tool.actions));
    const served = actions.filter((action) => !action.agentOnly && !action.personOnly && action.unavailable === undefined);
    expect(tools.map((tool) => tool.name).sort()).toEqual(served.map((action) => action.wireName).sort());
    // As for the agent, no tool that cannot work now: no embedder is selected, so every semantic search would be a 503.
    expect(actions.find((action) => action.wireName === 'search_semantic')?.unavailable).toBeDefined();
    expect(tools.map((tool) => tool.name)).not.toContain('search_semantic');
    expect(actions.some((action) => action.agentOnly)).toBe(true);
    expect(actions.some((action) => action.personOnly)).toBe(true);
    for (const action of served) {
      const tool = tools.find((candidate) => candidate.name === action.wireName) as Tool;
      expect([action.wireName, tool.annotations]).toEqual([action.wireName, {
        readOnlyHint: action.effects.length === 0,
        destructiveHint: action.effects.includes('localWrite') && action.destructive,
        idempotentHint: action.idempotent,
        openWorldHint: action.effects.includes('dataEgress') || action.effects.includes('externalCost'),
      }]);
      expect(tool.inputSchema.type).toBe('object');
    }
    // The same mapping written out by hand for a few actions, from their manifests (PROTOCOLS.md §1.5).
    const annotations = (name: string) => tools.find((tool) => tool.name === name)!.annotations;
    expect(annotations('notebook_list')).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(annotations('block_append')).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(annotations('block_update')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(annotations('document_remove')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
  });

  it('calls tools through the pipeline as the MCP caller: text and structured results, audited, with failures as isError results', async () => {
    const { kernel, url } = await serve();
    const client = await connect(url);
    const created = await client.callTool({ name: 'notebook_create', arguments: { name: 'From MCP' } });
    expect(created.isError).toBeFalsy();
    const notebook = created.structuredContent as { id: string };
    expect(JSON.parse((created.content as { text: string }[])[0]!.text)).toMatchObject({ id: notebook.id });
    const audit = (await import('node:fs/promises')).readFile(kernel.audit.logFile, 'utf8');
    expect((await audit).trim().split('\n').map((line) => JSON.parse(line) as { principal: { kind: string; name: string }; action: string }).at(-1)).toMatchObject({ principal: { kind: 'mcp', name: 'alice' } });

    // Invalid input is refused by validation (with the JSON pointer) before any handler runs: nothing was created.
    const invalid = await client.callTool({ name: 'notebook_create', arguments: { name: 42 } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]!.text).toMatch(/^INVALID_INPUT: .*\/name/);
    const listed = await client.callTool({ name: 'notebook_list', arguments: {} });
    expect((listed.structuredContent as { notebooks: unknown[] }).notebooks).toHaveLength(1);
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect([unknown.isError, (unknown.content as { text: string }[])[0]!.text]).toEqual([true, "ACTION_NOT_FOUND: no tool named 'no_such_tool'"]);
  });

  it('refuses actions with effects in a read-only workspace', async () => {
    const { url } = await serve({ readOnly: true });
    const client = await connect(url);
    const refused = await client.callTool({ name: 'notebook_create', arguments: { name: 'x' } });
    expect([refused.isError, (refused.content as { text: string }[])[0]!.text]).toEqual([true, expect.stringMatching(/^WORKSPACE_READ_ONLY/)]);
    expect((await client.callTool({ name: 'notebook_list', arguments: {} })).isError).toBeFalsy();
  });

  it('is for administrators only: 401 without a token (no OAuth challenge), 403 for a reader, 403 for a foreign origin, 413 for a large body', async () => {
    const { url } = await serve({ server: { bodyLimitBytes: 64 * 1024 } });
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await rawRequest(`${url}/mcp`, { method: 'POST', headers, body: initialize });
    expect(anonymous.status).toBe(401);
    expect(String(anonymous.headers['www-authenticate'])).not.toContain('resource_metadata');
    expect((await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${READER}` }, body: initialize })).status).toBe(403);
    await expect(connect(url, READER)).rejects.toThrow();
    const foreign = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${ADMIN}`, origin: 'http://evil.example.com' }, body: initialize });
    expect(foreign.status).toBe(403);
    const rebinding = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${ADMIN}`, host: 'evil.example.com' }, body: initialize });
    expect(rebinding.status).toBe(403);
    const large = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }) });
    expect(large.status).toBe(413);
  });

  it('binds each session to the token that opened it, and answers 404 for an unknown or foreign session', async () => {
    // A second token with the same name as the first: sessions belong to tokens, not to names.
    const { url } = await serve({ auth: { tokens: [...auth!.tokens!, { name: 'alice', role: 'admin', sha256: sha('qk_bob') }] } });
    const client = await connect(url);
    const transport = (client as unknown as { _transport: StreamableHTTPClientTransport })._transport;
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    const borrowed = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer qk_bob', 'mcp-session-id': sessionId }, body: list });
    expect(borrowed.status).toBe(404);
    const made = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${ADMIN}`, 'mcp-session-id': '00000000-0000-0000-0000-000000000000' }, body: list });
    expect(made.status).toBe(404);
    const own = await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${ADMIN}`, 'mcp-session-id': sessionId }, body: list });
    expect(own.status).toBe(200);
  });

  it('answers a tools/call that can have no progress as JSON, and one with a progress token as an event stream', async () => {
    const { url } = await serve();
    const client = await connect(url);
    const sessionId = (client as unknown as { _transport: StreamableHTTPClientTransport })._transport.sessionId!;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${ADMIN}`, 'mcp-session-id': sessionId };
    const post = (body: unknown, extra: Record<string, string> = {}) => rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const call = (id: number | string, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notebook_list', arguments: {}, ...(meta ? { _meta: meta } : {}) } });

    const plain = await post(call(7));
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json');
    expect(plain.headers['mcp-session-id']).toBe(sessionId);
    expect(plain.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { notebooks: [] } } });
    // Failures and unknown tools answer the same way, as results the model reads.
    expect((await post({ ...call('x'), params: { name: 'no_such_tool', arguments: {} } })).json()).toMatchObject({ id: 'x', result: { isError: true } });
    // Invalid params are the SDK server's JSON-RPC error, the same as on the event stream.
    const invalid = (id: number, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notebook_list', arguments: 'none', ...(meta ? { _meta: meta } : {}) } });
    const streamed = JSON.parse(/^data: (.*)$/m.exec((await post(invalid(6, { progressToken: 'p0' }))).body)![1]!) as { error: { code: number } };
    expect((await post(invalid(8))).json()).toEqual({ jsonrpc: '2.0', id: 8, error: streamed.error });

    const withProgress = await post(call(9, { progressToken: 'p1' }));
    expect(withProgress.headers['content-type']).toBe('text/event-stream');
    expect(withProgress.body).toContain('"id":9');
    // Anything the JSON answer does not cover goes to the SDK's transport as before.
    expect((await post(call(10), { 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await post(call(11), { accept: 'application/json' })).status).toBe(406);
    const listed = await post({ jsonrpc: '2.0', id: 12, method: 'tools/list', params: {} });
    expect(listed.headers['content-type']).toBe('text/event-stream');
    // Concurrent calls on one session each get their own answer.
    const answers = await Promise.all([20, 21, 22, 23].map((id) => post(call(id))));
    expect(answers.map((answer) => answer.json().id)).toEqual([20, 21, 22, 23]);
  });

  it('ends a tools/call its client cancels, answered as JSON or as an event stream, and refuses batches', async () => {
    // A tool that runs until its call is stopped.
    const waiter: UserPlugin = {
      manifest: { id: 'waiter', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [{ name: 'waiter', description: 'x', actions: { wait: { description: 'waits', input: { type: 'object' }, effects: [] } } }] },
      // It counts its calls in this process (it is trusted): the test cancels once the handler runs.
      code: 'export default { activate() { return { waiter: { wait: (input, call) => new Promise((done) => { globalThis.__quireWaiting = (globalThis.__quireWaiting ?? 0) + 1; const timer = setTimeout(() => done({ waited: true }), 20000); call.signal.addEventListener("abort", () => { clearTimeout(timer); done({ stopped: true }); }); }) } }; } };',
    };
    const { url } = await serve({ plugins: { waiter: { trusted: true } } }, { waiter });
    const client = await connect(url);
    const sessionId = (client as unknown as { _transport: StreamableHTTPClientTransport })._transport.sessionId!;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${ADMIN}`, 'mcp-session-id': sessionId };
    const post = (body: unknown, extra: Record<string, string> = {}) => rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const wait = (id: number, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'waiter_wait', arguments: {}, ...(meta ? { _meta: meta } : {}) } });
    const cancel = (id: number) => post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'changed my mind' } });
    const running = () => (globalThis as { __quireWaiting?: number }).__quireWaiting ?? 0;
    for (const [id, meta] of [[31, undefined], [32, { progressToken: 'p32' }]] as const) {
      const before = running();
      const answered = post(wait(id, meta));
      // A cancel that arrived before the call would be ignored (nothing to cancel yet).
      for (const end = Date.now() + 10_000; running() === before && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await cancel(id)).status).toBe(202);
      // It used to wait for ever (the SDK sends no response to a cancelled request).
      const answer = await answered;
      expect([id, answer.body]).toEqual([id, expect.stringContaining('-32800')]);
    }
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // A client that drops its request and cancels it may use the id again: the new request is answered
    // (the id stayed among the ended, and the new answer was dropped as the old one's late response).
    const before = running();
    const dropped = new AbortController();
    const gone = fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(wait(50)), signal: dropped.signal }).catch(() => undefined);
    for (const end = Date.now() + 10_000; running() === before && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 20));
    dropped.abort();
    await gone;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await cancel(50)).status).toBe(202);
    const reused = await post({ jsonrpc: '2.0', id: 50, method: 'tools/call', params: { name: 'nope', arguments: {} } });
    expect([reused.status, reused.body]).toEqual([200, expect.stringContaining('"id":50')]);
    // Params that do not fit tools/call are invalid params naming the field, as JSON or on a stream (-32603 with a validator dump before).
    for (const [id, meta] of [[61, undefined], [62, { progressToken: 'p62' }]] as const) {
      const malformed = await post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'waiter_wait', arguments: 'not an object', ...(meta ? { _meta: meta } : {}) } });
      expect([id, malformed.status, malformed.body]).toEqual([id, 200, expect.stringMatching(/"code":-32602,"message":"Invalid params: params\.arguments: [^"]{1,120}"/)]);
    }
    // So do those of resources and prompts (-32603 with the dump, as for a server fault a client may retry).
    for (const [id, method, params, field] of [[63, 'resources/read', {}, 'params.uri'], [64, 'prompts/get', {}, 'params.name'], [65, 'prompts/get', { name: 'summarize_document', arguments: { id: 1 } }, 'params.arguments.id'], [66, 'resources/subscribe', { uri: 7 }, 'params.uri']] as const) {
      const malformed = await post({ jsonrpc: '2.0', id, method, params });
      expect([id, malformed.body]).toEqual([id, expect.stringMatching(new RegExp(`"code":-32602,"message":"Invalid params: ${field.replace(/\./g, '\\.')}: [^"]{1,120}"`))]);
    }
    const batch = await post([wait(40), wait(41)]);
    expect([batch.status, batch.json().error?.code]).toEqual([400, 'INVALID_INPUT']);
    // An empty batch is one Invalid Request, as JSON-RPC 2.0 says (it was 202 with nothing).
    const empty = await post([]);
    expect([empty.status, empty.json()]).toEqual([400, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: an empty batch' }, id: null }]);
  });

  it('expires idle sessions, but not one whose client keeps its notification stream open', async () => {
    const { url } = await serve({ mcp: { sessionIdleMs: 1000 } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${ADMIN}` };
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const opened = await rawRequest(`${url}/mcp`, { method: 'POST', headers, body: initialize });
    const idle = String(opened.headers['mcp-session-id']);
    // The SDK client opens the standing GET stream after initialising: it is listening, not idle.
    const listening = await connect(url);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    expect((await rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': idle, 'mcp-protocol-version': '2025-11-25' }, body: list })).status).toBe(404);
    expect((await listening.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('at the session limit, a token opening sessions in a loop closes its own, not another token\'s; with every session in use, 503 says when to try again', async () => {
    const OTHER = 'qk_mcp-second-admin-token';
    const { url } = await serve({ mcp: { maxSessions: 3 }, auth: { tokens: [...auth!.tokens!, { name: 'bob', role: 'admin', sha256: sha(OTHER) }] } });
    const headers = (token: string) => ({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` });
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const open = async (token: string) => String((await rawRequest(`${url}/mcp`, { method: 'POST', headers: headers(token), body: initialize })).headers['mcp-session-id']);
    const list = (token: string, id: string) => rawRequest(`${url}/mcp`, { method: 'POST', headers: { ...headers(token), 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }) });
    const alices = await open(ADMIN);
    const bobs: string[] = [];
    for (let i = 0; i < 6; i++) bobs.push(await open(OTHER));
    // Alice's session was the least recently used, yet bob's own made room each time.
    expect((await list(ADMIN, alices)).status).toBe(200);
    expect((await Promise.all(bobs.map(async (id) => (await list(OTHER, id)).status)))).toEqual([404, 404, 404, 404, 200, 200]);

    // Three clients holding their notification streams open: every slot is in use.
    const streams = [fetchNotingStream(), fetchNotingStream(), fetchNotingStream()];
    await Promise.all([connect(url, ADMIN, streams[0]!.fetch), connect(url, OTHER, streams[1]!.fetch), connect(url, OTHER, streams[2]!.fetch)]);
    await Promise.all(streams.map((stream) => stream.streamOpen));
    const refused = await rawRequest(`${url}/mcp`, { method: 'POST', headers: headers(ADMIN), body: initialize });
    expect([refused.status, refused.json().error?.code, refused.headers['retry-after']]).toEqual([503, 'NOT_READY', '1']);
  });

  it('keeps in history what one MCP client wrote when another on the same token replaces it moments later', async () => {
    const { url } = await serve();
    const desktop = await connect(url, ADMIN, undefined, 'Claude Desktop');
    const editor = await connect(url, ADMIN, undefined, 'Cursor');
    const structured = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
    const notebook = await structured(desktop, 'notebook_create', { name: 'Meetings' });
    const doc = await structured(desktop, 'document_create', { notebook: notebook.id, title: 'Monday', markdown: 'draft' });
    const listed = await structured(desktop, 'document_get', { id: doc.id }) as { document: { children: { id: string }[] } };
    const block = listed.document.children[0]!.id;
    await structured(desktop, 'block_update', { id: block, markdown: 'A: two hours of meeting notes that matter' });
    await structured(editor, 'block_update', { id: block, markdown: 'B: replaced' });
    // Two authors (one token, two programs): the first one's text is a version (it was in none: one burst).
    const found = await structured(desktop, 'history_search', { query: 'meeting' }) as { results: { by: string }[] };
    expect(found.results.map((version) => version.by)).toEqual(['mcp:alice/Cursor']);
    const block2 = await structured(editor, 'block_get', { id: block }) as { block: { attrs: { updatedBy?: string; 'updated-by'?: string } } };
    expect(JSON.stringify(block2)).toContain('mcp:alice/Cursor');
  });

  it('cuts the text a client\'s model reads at 100,000 characters, saying where the whole answer is', async () => {
    const { url } = await serve();
    const client = await connect(url);
    const structured = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
    const notebook = await structured('notebook_create', { name: 'Long' });
    const paragraph = (i: number): string => `Paragraph ${i}: ${'the quarterly figures, what changed since the last review and what the team decided. '.repeat(5)}`;
    const doc = await structured('document_create', { notebook: notebook.id, title: 'Long', markdown: Array.from({ length: 400 }, (_, i) => paragraph(i)).join('\n\n') });
    const answer = await client.callTool({ name: 'document_get', arguments: { id: doc.id } });
    const text = (answer.content as { text: string }[])[0]!.text;
    const whole = JSON.stringify(answer.structuredContent);
    expect(whole.length).toBeGreaterThan(150_000);
    expect(text.length).toBeLessThan(100_400);
    expect(text).toMatch(/\[Answer cut: \d+ characters, the first 100000 shown; the whole answer is in this result's structured content/);
    expect((answer.structuredContent as { document: { children: unknown[] } }).document.children).toHaveLength(400);
    // Never between the halves of a surrogate pair (a lone half breaks a client's UTF-8): either parity of the cut.
    for (const lead of ['', 'a']) {
      const emoji = await structured('document_create', { notebook: notebook.id, title: `Faces${lead}`, markdown: `${lead}${'😀'.repeat(60_000)}` });
      const cut = ((await client.callTool({ name: 'document_get', arguments: { id: emoji.id } })).content as { text: string }[])[0]!.text;
      expect(cut).toMatch(/\[Answer cut/);
      expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(cut)).toBe(false);
    }
  });

  it('tells connected clients when tools change, as a plugin is disabled and enabled while serving', async () => {
    const { url } = await serve();
    const noting = fetchNotingStream();
    const client = await connect(url, ADMIN, noting.fetch);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes++; });
    // The notification travels on the standing GET stream, which the client opens after initialising.
    await noting.streamOpen;
    const put = (enabled: boolean) => rawRequest(`${url}/api/plugins/sql`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ enabled }) });
    expect((await put(false)).status).toBe(200);
    await expect.poll(() => changes).toBe(1);
    expect((await client.listTools()).tools.some((tool) => tool.name === 'sql_query')).toBe(false);
    expect((await put(true)).status).toBe(200);
    await expect.poll(() => changes).toBe(2);
    expect((await client.listTools()).tools.some((tool) => tool.name === 'sql_query')).toBe(true);
    const wiring = await rawRequest(`${url}/api/plugins/blocks`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ enabled: false }) });
    expect([wiring.status, wiring.json().error?.code]).toEqual([409, 'CONFLICT']);
  });

  it('tells connected clients when a tool becomes usable or not, as the plugin offering its backend is enabled and disabled', async () => {
    // local-models offers the embedder and has no tools of its own: enabling it changes no action, only what can work.
    const { url } = await serve({ plugins: { 'local-models': { enabled: false, config: { embedder: { model: 'org/model' } } }, 'search-semantic': { config: { embedder: 'local-models' } } } });
    const noting = fetchNotingStream();
    const client = await connect(url, ADMIN, noting.fetch);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes++; });
    await noting.streamOpen;
    const listed = async () => (await client.listTools()).tools.some((tool) => tool.name === 'search_semantic');
    expect(await listed()).toBe(false);
    const put = (enabled: boolean) => rawRequest(`${url}/api/plugins/local-models`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ enabled }) });
    expect((await put(true)).status).toBe(200);
    await expect.poll(() => changes).toBeGreaterThanOrEqual(1);
    expect(await listed()).toBe(true);
    const before = changes;
    expect((await put(false)).status).toBe(200);
    await expect.poll(() => changes).toBeGreaterThan(before);
    expect(await listed()).toBe(false);
  });
});
