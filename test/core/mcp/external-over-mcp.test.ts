import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseKernelConfig, type KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { Kernel } from '../../../core/kernel.js';
import { silentLogger } from '../../../core/log.js';
import { caught, useHarness } from '../../helpers/harness.js';

const STDIO_SERVER = join(import.meta.dirname, '..', '..', 'fixtures', 'mcp', 'stdio-server.mjs');
const ADMIN = 'qk_relay-admin-token';
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] };
const echo: Tool = { name: 'echo', description: 'Echo the arguments back', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, annotations: { readOnlyHint: true, openWorldHint: false } };

describe('Quire is not a relay: external MCP tools on /mcp', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const server of servers.splice(0)) await server.close();
  });

  async function fixtureServer(extra: Record<string, unknown>) {
    const folder = await harness.tempDir('quire-relay-fixture-');
    const toolsFile = join(folder, 'tools.json');
    const log = join(folder, 'calls.log');
    await writeFile(toolsFile, JSON.stringify([echo]));
    await writeFile(log, '');
    return { log, config: { command: process.execPath, args: [STDIO_SERVER], env: { FIXTURE_TOOLS: toolsFile, FIXTURE_LOG: log }, ...extra } };
  }

  async function serveAndConnect(server: Record<string, unknown>) {
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, mcp: { servers: { fixture: server as never } } } });
    const running = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(running);
    const client = new Client({ name: 'quire-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } }));
    clients.push(client);
    return { kernel, client };
  }

  it('leaves an external server\'s tools out of tools/list and refuses a call to them by name, by default', async () => {
    const fixture = await fixtureServer({ trusted: true });
    const { kernel, client } = await serveAndConnect(fixture.config);
    // The tool is there for the agent and HTTP: only /mcp leaves it out.
    expect(kernel.registry.get('fixture_echo')).toBeDefined();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('note_get');
    expect(names).not.toContain('fixture_echo');
    const called = await client.callTool({ name: 'fixture_echo', arguments: { text: 'relayed?' } });
    expect([called.isError, (called.content as { text: string }[])[0]!.text.split(':')[0]]).toEqual([true, 'ACTION_NOT_FOUND']);
    expect(await readFile(fixture.log, 'utf8')).toBe('');
  });

  it('serves the tools of a trusted server opted in with serveOverMcp', async () => {
    const fixture = await fixtureServer({ trusted: true, serveOverMcp: true });
    const { client } = await serveAndConnect(fixture.config);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('fixture_echo');
    const called = await client.callTool({ name: 'fixture_echo', arguments: { text: 'served' } });
    expect(called.isError).toBeFalsy();
    expect(called.structuredContent).toEqual({ echoed: { text: 'served' } });
  });

  it('never serves an untrusted server, even when a configuration handed to the kernel says serveOverMcp', async () => {
    const fixture = await fixtureServer({ trusted: false, serveOverMcp: true });
    const { client } = await serveAndConnect(fixture.config);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('fixture_echo');
    expect((await client.callTool({ name: 'fixture_echo', arguments: {} })).isError).toBe(true);
    expect(await readFile(fixture.log, 'utf8')).toBe('');
  });

  it('refuses serveOverMcp on an untrusted server in quire.json, naming the JSON pointer', async () => {
    const raw = { mcp: { servers: { files: { command: 'node', serveOverMcp: true }, remote: { url: 'https://mcp.example.com/mcp', trusted: false, serveOverMcp: true }, fine: { command: 'node', trusted: true, serveOverMcp: true } } } };
    const error = await caught(() => parseKernelConfig(raw, 'quire.json'));
    expect(error.code).toBe('CONFIG_INVALID');
    expect((error.details?.issues as { pointer: string }[]).map((issue) => issue.pointer)).toEqual(['/mcp/servers/files/serveOverMcp', '/mcp/servers/remote/serveOverMcp']);
    // And through a real start from the workspace's quire.json.
    const workspace = join(await harness.tempDir(), 'workspace');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'quire.json'), JSON.stringify({ mcp: { servers: { files: { command: 'node', serveOverMcp: true } } } }));
    const boot = await caught(Kernel.boot({ workspace, logger: silentLogger }));
    expect([boot.code, (boot.details?.issues as { pointer: string }[])[0]!.pointer]).toEqual(['CONFIG_INVALID', '/mcp/servers/files/serveOverMcp']);
  });
});
