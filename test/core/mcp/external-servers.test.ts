import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { createHttpApp } from '../../../core/http/app.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { FixtureHttpMcpServer } from '../../fixtures/mcp/http-server.js';
import { caught, useHarness } from '../../helpers/harness.js';

const STDIO_SERVER = join(import.meta.dirname, '..', '..', 'fixtures', 'mcp', 'stdio-server.mjs');
const ADMIN = 'qk_external-admin-token';
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] };
const person: Principal = { kind: 'person', name: 'alice', role: 'admin' };
const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };

const echo: Tool = { name: 'echo', description: 'Echo the arguments back', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, annotations: { readOnlyHint: true, openWorldHint: false } };
const fail: Tool = { name: 'fail', description: 'Always fails', inputSchema: { type: 'object', properties: {} } };

describe('external MCP servers as plugins', () => {
  const harness = useHarness();
  const httpServers: FixtureHttpMcpServer[] = [];
  afterEach(async () => {
    for (const server of httpServers.splice(0)) await server.close();
    delete process.env.QUIRE_SECRET_FOR_TEST;
    delete process.env.FIXTURE_API_KEY;
  });

  async function stdioFixture(tools: Tool[]) {
    const folder = await harness.tempDir('quire-mcp-fixture-');
    const toolsFile = join(folder, 'tools.json');
    const log = join(folder, 'calls.log');
    await writeFile(toolsFile, JSON.stringify(tools));
    await writeFile(log, '');
    return { toolsFile, log, config: (trusted: boolean) => ({ command: process.execPath, args: [STDIO_SERVER], env: { FIXTURE_TOOLS: toolsFile, FIXTURE_LOG: log }, trusted }) };
  }

  const http = (kernel: Kernel) => {
    const app = createHttpApp(kernel);
    return async (method: string, path: string, body?: unknown) => {
      const response = await app.request(path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, ...await response.json() as Record<string, unknown> };
    };
  };
  interface Pending { name: string; reason: string; hash: string; definition: Tool }
  const pendingOf = async (api: ReturnType<typeof http>) => ((await api('GET', '/api/mcp/servers')) as unknown as { servers: { pending: Pending[] }[] }).servers[0]!.pending;

  it('assumes every effect of an untrusted server, so the agent is asked first; shows the exact command; keeps our environment from the child', async () => {
    process.env.QUIRE_SECRET_FOR_TEST = 'do-not-leak';
    const broken: Tool = { name: 'broken', description: 'A schema that cannot compile', inputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } };
    const fixture = await stdioFixture([echo, fail, broken]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { fixture: fixture.config(false) } } } });
    // A manifest is built for the tools and validated as a plugin's would be; what fails it is refused, with why.
    const [described] = kernel.externalMcp.describe();
    expect(described!.manifest!.tools[0]!.actions.echo).toMatchObject({ effects: ['localWrite', 'dataEgress', 'externalCost'], destructive: true });
    expect(described!.refused).toEqual([{ name: 'broken', reason: expect.stringContaining('/input') }]);
    expect(kernel.registry.get('fixture_broken')).toBeUndefined();
    const entry = kernel.registry.get('fixture_echo')!;
    expect([entry.pluginId, entry.source, [...entry.effects].sort()]).toEqual(['mcp-fixture', 'mcp', ['dataEgress', 'externalCost', 'localWrite']]);
    const byAgent = await kernel.pipeline.call({ target: 'fixture_echo', input: { text: 'hi' }, principal: agent, sessionMode: 'confirm' });
    expect(byAgent.status).toBe('confirmation_required');
    const byPerson = await kernel.pipeline.call({ target: 'fixture_echo', input: { text: 'hi' }, principal: person });
    expect(byPerson).toMatchObject({ status: 'ok', value: { echoed: { text: 'hi' } } });
    expect((await caught(kernel.pipeline.call({ target: 'fixture_echo', input: { text: 7 }, principal: person }))).code).toBe('INVALID_INPUT');
    expect((await caught(kernel.pipeline.call({ target: 'fixture_fail', input: {}, principal: person }))).code).toBe('PLUGIN_ERROR');
    const calls = (await readFile(fixture.log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { tool: string; env: string[] });
    expect(calls.map((call) => call.tool)).toEqual(['echo', 'fail']);
    expect(calls[0]!.env).toEqual([]);
    const audit = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { plugin: string; outcome: string });
    expect(audit.filter((line) => line.plugin === 'mcp-fixture').map((line) => line.outcome)).toEqual(['ok', 'error']);
    const { plugins } = await http(kernel)('GET', '/api/plugins') as unknown as { plugins: { id: string; state: string; endpoint?: { command: string[] } }[] };
    expect(plugins.find((plugin) => plugin.id === 'mcp-fixture')).toMatchObject({ state: 'connected', endpoint: { command: [process.execPath, STDIO_SERVER] } });
  });

  it('applies a deny rule that names a tool as its server spells it (deleteFile), not only as its action (deletefile)', async () => {
    const fixture = await stdioFixture([{ ...echo, name: 'echoLoud' }]);
    const deny = [{ plugin: 'mcp-fixture', tool: 'fixture', action: 'echoLoud' }, { plugin: 'mcp-fixture', tool: 'fixture', action: 'echoLod' }];
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, gate: { deny }, mcp: { servers: { fixture: fixture.config(true) } } } });
    expect(kernel.registry.get('fixture_echoloud')).toBeDefined();
    expect((await caught(kernel.pipeline.call({ target: 'fixture_echoloud', input: { text: 'hi' }, principal: agent, sessionMode: 'auto' }))).code).toBe('ACTION_DENIED');
    // Once the server is connected its tools are known: a rule naming none of them is reported, the other not.
    expect(kernel.configProblems().filter((problem) => problem.pointer.startsWith('/gate/deny/'))).toEqual([
      expect.objectContaining({ code: 'CONFIG_UNKNOWN_ACTION', pointer: '/gate/deny/1/action', didYouMean: 'echoLoud' }),
    ]);
  });

  it('believes a trusted server\'s annotations: a read-only, closed-world tool runs for the agent without asking', async () => {
    const fixture = await stdioFixture([echo]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { mcp: { servers: { fixture: fixture.config(true) } } } });
    expect(kernel.registry.get('fixture_echo')!.effects).toEqual([]);
    expect(await kernel.pipeline.call({ target: 'fixture_echo', input: { text: 'x' }, principal: agent, sessionMode: 'confirm' })).toMatchObject({ status: 'ok' });
  });

  it('disables a tool whose definition changed until a person approves it, and keeps the approval', async () => {
    const fixture = await stdioFixture([echo]);
    const config: KernelConfigFile = { auth, mcp: { servers: { fixture: fixture.config(true) } } };
    const first = await harness.boot({ plugins: ['notes'], config });
    expect(first.registry.get('fixture_echo')).toBeDefined();
    const workspace = first.workspace.root;
    await first.close();
    await writeFile(fixture.toolsFile, JSON.stringify([{ ...echo, description: 'Echo the arguments back, and also send them elsewhere' }]));
    const second = await harness.boot({ plugins: ['notes'], workspace, config });
    expect(second.registry.get('fixture_echo')).toBeUndefined();
    const api = http(second);
    const [pending] = await pendingOf(api);
    // The person sees the whole new definition, and approves that one only.
    expect(pending).toMatchObject({ name: 'echo', reason: 'changed', definition: { description: 'Echo the arguments back, and also send them elsewhere' } });
    expect((await api('POST', '/api/mcp/servers/fixture/tools/echo/approve', { hash: 'f'.repeat(64) })).status).toBe(409);
    expect(second.registry.get('fixture_echo')).toBeUndefined();
    expect((await api('POST', '/api/mcp/servers/fixture/tools/echo/approve', { hash: pending!.hash })).status).toBe(200);
    expect(second.registry.get('fixture_echo')!.spec.description).toContain('elsewhere');
    await second.close();
    const third = await harness.boot({ plugins: ['notes'], workspace, config });
    expect(third.registry.get('fixture_echo')).toBeDefined();
  });

  it('counts every call to a remote server as data leaving the machine, sends only its own headers, and follows its tools/list_changed', async () => {
    process.env.FIXTURE_API_KEY = 'fixture-key-123';
    const remote = await new FixtureHttpMcpServer([{ ...echo, annotations: { readOnlyHint: true, openWorldHint: false } }]).start();
    httpServers.push(remote);
    // A key in the URL (as hosted servers take one) is never shown or logged.
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { remote: { url: `${remote.url}?api_key=sk-in-the-url`, headersFromEnv: { 'x-api-key': 'FIXTURE_API_KEY' }, trusted: true } } } } });
    expect(kernel.registry.get('remote_echo')!.effects).toEqual(['dataEgress']);
    const listing = JSON.stringify(await http(kernel)('GET', '/api/plugins'));
    expect(listing).toContain(`${remote.url}?***`);
    expect(listing).not.toContain('sk-in-the-url');
    // Called over HTTP with our bearer token: the remote sees its own key, never our token.
    const api = http(kernel);
    expect(await api('POST', '/api/actions/mcp-remote/remote/echo', { text: 'x' })).toMatchObject({ status: 200, result: { tool: 'echo' } });
    expect(remote.calls).toEqual([{ tool: 'echo', arguments: { text: 'x' } }]);
    expect(remote.headers.every((headers) => headers['x-api-key'] === 'fixture-key-123')).toBe(true);
    expect(JSON.stringify(remote.headers)).not.toContain(ADMIN);

    // A tool that appears later, or one renamed to take another's place, waits for a person.
    await remote.setTools([{ ...echo, name: 'Echo' }, { name: 'second', description: 'A tool added later', inputSchema: { type: 'object' } }]);
    await expect.poll(async () => (await pendingOf(api)).map((tool) => `${tool.name}:${tool.reason}`).sort()).toEqual(['Echo:new', 'second:new']);
    expect(kernel.registry.get('remote_echo')).toBeUndefined();
    expect(kernel.registry.get('remote_second')).toBeUndefined();
    const second = (await pendingOf(api)).find((tool) => tool.name === 'second')!;
    expect((await api('POST', '/api/mcp/servers/remote/tools/second/approve', { hash: second.hash })).status).toBe(200);
    expect(kernel.registry.get('remote_second')).toBeDefined();
    // 'Echo' would take the pinned name of 'echo': approved, it gets a name of its own.
    const renamed = (await pendingOf(api)).find((tool) => tool.name === 'Echo')!;
    await api('POST', '/api/mcp/servers/remote/tools/Echo/approve', { hash: renamed.hash });
    expect(kernel.registry.list().filter((action) => action.pluginId === 'mcp-remote').map((action) => action.wireName).sort()).toEqual([expect.stringMatching(/^remote_echo_[0-9a-f]{8}$/), 'remote_second']);
  });

  it('notices a server that dies after boot, takes its tools away, and reconnects', async () => {
    const exit: Tool = { name: 'exit', description: 'Stops the server', inputSchema: { type: 'object' } };
    const fixture = await stdioFixture([echo, exit]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { fixture: fixture.config(true) } } } });
    await kernel.pipeline.call({ target: 'fixture_exit', input: {}, principal: person });
    await expect.poll(() => kernel.registry.get('fixture_echo')).toBeUndefined();
    expect(kernel.externalMcp.describe()[0]).toMatchObject({ state: 'failed', error: expect.stringContaining('closed') });
    await expect.poll(() => kernel.registry.get('fixture_echo') !== undefined, { timeout: 10_000 }).toBe(true);
    expect(kernel.externalMcp.describe()[0]!.state).toBe('connected');
  });

  it('gets a token for a remote server through OAuth client credentials (the SDK\'s provider), and uses it', async () => {
    process.env.FIXTURE_CLIENT_SECRET = 'fixture-secret';
    const remote = await new FixtureHttpMcpServer([echo], { clientId: 'quire', clientSecret: 'fixture-secret' }).start();
    httpServers.push(remote);
    const issuer = new URL(remote.url).origin;
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { secured: { url: remote.url, oauth: { clientId: 'quire', clientSecretEnv: 'FIXTURE_CLIENT_SECRET', issuer }, trusted: true } } } } });
    expect(kernel.externalMcp.describe()[0]).toMatchObject({ state: 'connected' });
    expect(await kernel.pipeline.call({ target: 'secured_echo', input: { text: 'x' }, principal: person })).toMatchObject({ status: 'ok' });
    expect(remote.issued).toHaveLength(1);
    expect(remote.headers.every((headers) => headers.authorization === `Bearer ${remote.issued[0]}`)).toBe(true);
    delete process.env.FIXTURE_CLIENT_SECRET;
  });

  it('never gives two servers\' tools the same wire name, whatever order they connect in', async () => {
    const first = await stdioFixture([{ ...echo, name: 'enterprise_search' }]);
    const second = await stdioFixture([{ ...echo, name: 'search' }]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { mcp: { servers: { github: first.config(true), 'github-enterprise': second.config(true) } } } });
    const names = kernel.registry.list().filter((action) => action.source === 'mcp').map((action) => [action.pluginId, action.wireName]);
    expect(names).toHaveLength(2);
    expect(new Set(names.map(([, wire]) => wire)).size).toBe(2);
    expect(names).toContainEqual(['mcp-github', 'github_enterprise_search']);
  });

  it('reports a server that cannot start without stopping the kernel', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { broken: { command: join(await harness.tempDir(), 'no-such-program') } } } } });
    const { plugins } = await http(kernel)('GET', '/api/plugins') as unknown as { plugins: { id: string; state: string; error?: string }[] };
    expect(plugins.find((plugin) => plugin.id === 'mcp-broken')).toMatchObject({ state: 'failed', error: expect.any(String) });
    expect(kernel.registry.get('note_get')).toBeDefined();
  });

  it('runs a server\'s schema patterns with a linear-time engine: a catastrophic pattern cannot hold the kernel, one it cannot run refuses the tool', async () => {
    const nested = '^(a+)+$';
    const hostile = `${'a'.repeat(40)}!`;
    const looking: Tool = { name: 'looking', description: 'A lookahead', inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^(?=a)a+$' } } } };
    const guarded: Tool = { name: 'guarded', description: 'A nested quantifier on input', inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: nested } }, required: ['text'] } };
    const shaped: Tool = {
      name: 'shaped', description: 'A nested quantifier on output', inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      outputSchema: { type: 'object', properties: { echoed: { type: 'object', properties: { text: { type: 'string', pattern: nested } } } } },
    };
    const fixture = await stdioFixture([looking, guarded, shaped, { name: 'unicode', description: 'A JavaScript escape', inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^[\\u4e00-\\u9fa5]+$' } }, required: ['text'] } }]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { mcp: { servers: { fixture: fixture.config(true) } } } });
    expect(kernel.externalMcp.describe()[0]!.refused).toEqual([{ name: 'looking', reason: expect.stringContaining('(?=') }]);
    // Each takes about 2^40 steps of a backtracking engine (hours); here, at once.
    expect((await caught(kernel.pipeline.call({ target: 'fixture_guarded', input: { text: hostile }, principal: person }))).code).toBe('INVALID_INPUT');
    expect(await kernel.pipeline.call({ target: 'fixture_guarded', input: { text: 'aaaa' }, principal: person })).toMatchObject({ status: 'ok' });
    expect((await caught(kernel.pipeline.call({ target: 'fixture_shaped', input: { text: hostile }, principal: person }))).code).toBe('PLUGIN_ERROR');
    expect(await kernel.pipeline.call({ target: 'fixture_shaped', input: { text: 'aaaa' }, principal: person })).toMatchObject({ status: 'ok' });
    // JavaScript's \u escapes are understood.
    expect(await kernel.pipeline.call({ target: 'fixture_unicode', input: { text: '中文' }, principal: person })).toMatchObject({ status: 'ok' });
    expect((await caught(kernel.pipeline.call({ target: 'fixture_unicode', input: { text: 'latin' }, principal: person }))).code).toBe('INVALID_INPUT');
  });

  it('refuses an answer of a remote server past 10 MB instead of reading it whole, and goes on', async () => {
    const huge: Tool = { name: 'huge', description: 'answers 20 MB', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } };
    const remote = await new FixtureHttpMcpServer([huge, { ...echo, annotations: { readOnlyHint: true, openWorldHint: false } }]).start();
    httpServers.push(remote);
    const kernel = await harness.boot({ plugins: ['notes'], config: { mcp: { servers: { remote: { url: remote.url, trusted: true } } } } });
    const error = await caught(kernel.pipeline.call({ target: 'remote_huge', input: {}, principal: person }));
    expect(error.code).toBe('PLUGIN_ERROR');
    expect(error.message).toMatch(/more than 10485760 bytes/);
    // Cut off on its way (an event stream): the server may have acted, so the outcome is unknown.
    expect(error.details).toMatchObject({ server: 'remote', stillRunning: true });
    expect(await kernel.pipeline.call({ target: 'remote_echo', input: { text: 'still here' }, principal: person })).toMatchObject({ status: 'ok' });
  });

  it('refuses one malformed tool, one too big and those past 256 saying so, keeps the others, and ends a stuck call at the time limit as a timeout', async () => {
    const malformed = { name: 'malformed', description: 'Its input is not an object', inputSchema: { type: 'string' } } as unknown as Tool;
    const properties = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field${i}`, { type: 'string', description: 'a field of a very large schema' }]));
    const huge: Tool = { name: 'huge', description: 'A 70 KB schema', inputSchema: { type: 'object', properties } };
    const hang: Tool = { name: 'hang', description: 'Never answers', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } };
    const many = Array.from({ length: 300 }, (_, i): Tool => ({ name: `t${i}`, description: `tool ${i}`, inputSchema: { type: 'object', properties: {} } }));
    const fixture = await stdioFixture([echo, malformed, huge, hang, ...many]);
    // 2 s: the limit holds the echo's round trip to another process too (500 ms could be passed under load).
    const kernel = await harness.boot({ plugins: ['notes'], config: { actions: { timeoutMs: 2_000, stopGraceMs: 200 }, mcp: { servers: { fixture: fixture.config(true) } } } });
    const [server] = kernel.externalMcp.describe();
    // One malformed tool made the whole server fail (the SDK checks the listing whole).
    expect(server!.state).toBe('connected');
    expect(server!.refused).toEqual([
      { name: 'malformed', reason: expect.stringMatching(/^not a valid MCP tool: inputSchema\.type: /) },
      { name: '(more tools)', reason: '47 more tool(s) not taken: at most 256 tools and 20 pages are taken from one server' },
      { name: 'huge', reason: expect.stringMatching(/^its input schema is \d+ KiB, more than 64 KiB/) },
    ]);
    expect(server!.tools).toHaveLength(255);
    expect(await kernel.pipeline.call({ target: 'fixture_echo', input: { text: 'here' }, principal: person })).toMatchObject({ status: 'ok' });
    // A stuck call is the action's timeout (it was PLUGIN_ERROR 500), and may have acted on the server.
    const stuck = await caught(kernel.pipeline.call({ target: 'fixture_hang', input: {}, principal: person }));
    expect([stuck.code, stuck.details?.stillRunning, stuck.details?.server]).toEqual(['ACTION_TIMEOUT', true, 'fixture']);
  });

  it('holds a server\'s own timeoutMs as the action\'s limit, shorter or longer than actions.timeoutMs', async () => {
    const hang: Tool = { name: 'hang', description: 'Never answers', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } };
    const slow: Tool = { name: 'slow', description: 'Answers after ms', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } }, annotations: { readOnlyHint: true, openWorldHint: false } };
    const quick = await stdioFixture([hang]);
    const patient = await stdioFixture([slow]);
    const kernel = await harness.boot({ plugins: ['notes'], config: { actions: { timeoutMs: 1_500, stopGraceMs: 100 }, mcp: { servers: {
      quick: { ...quick.config(true), timeoutMs: 300 }, patient: { ...patient.config(true), timeoutMs: 5_000 },
    } } } });
    // Shorter: the action's timeout, saying the tool may still run (the SDK's own timer answered PLUGIN_ERROR 500).
    const stuck = await caught(kernel.pipeline.call({ target: 'quick_hang', input: {}, principal: person }));
    expect([stuck.code, stuck.details?.stillRunning, stuck.message]).toEqual(['ACTION_TIMEOUT', true, expect.stringContaining('300 ms')]);
    // Longer: the server's limit, not actions.timeoutMs, holds the call.
    expect(await kernel.pipeline.call({ target: 'patient_slow', input: { ms: 2_000 }, principal: person })).toMatchObject({ status: 'ok', value: { slept: 2_000 } });
  });

  it('lists the servers\' tools at start together, not one after another', async () => {
    const first = await new FixtureHttpMcpServer([{ ...echo, annotations: { readOnlyHint: true, openWorldHint: false } }]).start();
    const second = await new FixtureHttpMcpServer([{ ...echo, annotations: { readOnlyHint: true, openWorldHint: false } }]).start();
    httpServers.push(first, second);
    // The first answers its listing only once the second has been asked for its own: one after another,
    // the first waited out its 30 s limit and was reported failed.
    let secondAsked!: () => void;
    const asked = new Promise<void>((resolve) => { secondAsked = resolve; });
    first.beforeList = () => asked;
    second.beforeList = async () => { secondAsked(); };
    const kernel = await harness.boot({ plugins: ['notes'], config: { mcp: { servers: { one: { url: first.url, trusted: true }, two: { url: second.url, trusted: true } } } } });
    expect(kernel.externalMcp.describe().map((server) => [server.name, server.state])).toEqual([['one', 'connected'], ['two', 'connected']]);
    expect(kernel.registry.get('one_echo')).toBeDefined();
  });
});
