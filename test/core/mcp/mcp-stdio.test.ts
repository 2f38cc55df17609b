import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, CliProcess, startServe } from '../../helpers/cli-process.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

/** Issue 18, point 3: `quire mcp` driven by the MCP SDK's own stdio client, as Claude Desktop or Cursor would. */
interface Audited { principal: { kind: string; name: string; client?: string }; tool: string; action: string }

async function auditLines(root: string): Promise<Audited[]> {
  return (await readFile(join(root, 'audit', 'audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Audited);
}

async function stdioClient(root: string, name: string, env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  let stderr = '';
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--workspace', root], cwd: REPO_ROOT, env: { ...process.env, ...env } as Record<string, string>, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('quire mcp (stdio)', () => {
  const { tempDir } = useHarness();
  const processes: CliProcess[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    // Before the harness removes the folders (after-hooks run last registered first): the processes are gone.
    await Promise.all(processes.splice(0).map((child) => { child.kill(); return child.exited; }));
  });

  it('opens the workspace itself when nobody serves it: lists and calls the tools, names the caller as the client, and lets go of the workspace when the client quits', async () => {
    expect(existsSync(CLI), 'run `npm run build` first').toBe(true);
    const root = join(await tempDir('quire-mcp-stdio-'), 'workspace');
    // An existing folder: quire mcp makes no workspace at a path where there is none (a mistyped path).
    await mkdir(root);
    const { client } = await stdioClient(root, 'Claude Desktop');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['notebook_create', 'search_fulltext']));
    expect(names).not.toContain('notebook_set_privacy');
    const created = await client.callTool({ name: 'notebook_create', arguments: { name: 'From stdio' } });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ name: 'From stdio' });
    const refused = await client.callTool({ name: 'notebook_rename', arguments: { id: 'not-an-id', name: 'x' } });
    expect(refused).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('INVALID_INPUT') }] });
    await client.close();
    // The client gone, the workspace is free: a kernel can serve it (its lock was let go).
    const serve = await startServe(root);
    processes.push(serve.process);
    const audited = (await auditLines(root)).filter((line) => line.tool === 'notebook');
    expect(audited.at(-1)).toMatchObject({ principal: { kind: 'mcp', name: 'stdio', client: 'Claude Desktop' } });
  }, 60_000);

  it('relays to the kernel that serves the workspace: same tools, the serving kernel does the work, the caller is named as the client', async () => {
    const root = join(await tempDir('quire-mcp-relay-'), 'workspace');
    const serve = await startServe(root);
    processes.push(serve.process);
    const { client, stderr } = await stdioClient(root, 'Cursor');
    clients.push(client);
    const created = await client.callTool({ name: 'notebook_create', arguments: { name: 'Relayed' } });
    expect(created.isError).toBeFalsy();
    expect(stderr()).toContain(`relaying to the kernel at ${serve.url}`);
    // Resources pass through too.
    const notebook = created.structuredContent as { id: string };
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain(`quire://notebooks/${notebook.id}`);
    const token = (await readFile(join(root, '.quire', 'admin.token'), 'utf8')).trim();
    const listed = await fetch(`${serve.url}/api/actions/blocks/notebook/list`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(JSON.stringify(await listed.json())).toContain('Relayed');
    const audited = (await auditLines(root)).filter((line) => line.tool === 'notebook');
    expect(audited.at(-1)).toMatchObject({ principal: { kind: 'mcp', client: 'Cursor' } });

    // A client that sends its last requests and closes its end gets their answers (only initialize's came).
    const child = spawn(process.execPath, [CLI, 'mcp', '--workspace', root], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
    let answers = '';
    child.stdout.on('data', (chunk: Buffer) => { answers += chunk.toString(); });
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'batch', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'notebook_list', arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ];
    child.stdin.end(requests.map((request) => `${JSON.stringify(request)}\n`).join(''));
    await new Promise((resolve) => child.on('exit', resolve));
    const ids = answers.trim().split('\n').map((line) => (JSON.parse(line) as { id?: number }).id);
    expect(ids).toEqual([1, 2, 3]);

    // The kernel restarted (at the same address): the relay opens a new session and goes on (every
    // request answered 404 "no such MCP session" for good).
    await serve.process.stop();
    const again = CliProcess.start(['serve', '--workspace', root, '--port', new URL(serve.url).port]);
    processes.push(again);
    await again.next(/Listening on/);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('notebook_create');
    // The kernel gone: the relay ends, so the client sees its server close and may start it again.
    let closed!: () => void;
    const relayClosed = new Promise<void>((resolve) => { closed = resolve; });
    client.onclose = () => closed();
    await again.stop();
    await expect(client.listTools()).rejects.toThrow();
    await relayClosed;
  }, 60_000);
});
