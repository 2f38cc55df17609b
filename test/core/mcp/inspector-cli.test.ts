import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { useHarness } from '../../helpers/harness.js';

const run = promisify(execFile);
const INSPECTOR = realpathSync(join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'mcp-inspector'));
const ADMIN = 'qk_inspector-admin-token';

/**
 * The Inspector that runs on Node 20 (0.15.0) has no flag for headers (PROTOCOLS.md §2). A loopback
 * proxy adds the bearer token, standing in for that flag; everything else is the Inspector's own.
 */
async function tokenProxy(target: string): Promise<{ url: string; server: Server }> {
  const server = createServer((incoming, outgoing) => {
    const forward = httpRequest(`${target}${incoming.url}`, { method: incoming.method, headers: { ...incoming.headers, host: new URL(target).host, authorization: `Bearer ${ADMIN}` } }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the MCP Inspector CLI against /mcp', () => {
  const harness = useHarness();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('lists our tools and calls one', async () => {
    const kernel = await harness.boot({ realManifests: true, config: { auth: { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] }, plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const server: RunningServer = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    closers.push(() => server.close());
    const proxy = await tokenProxy(server.url);
    closers.push(() => new Promise((resolve) => { proxy.server.closeAllConnections(); proxy.server.close(() => resolve()); }));

    const inspector = (...args: string[]) => run(process.execPath, [INSPECTOR, '--cli', `${proxy.url}/mcp`, '--transport', 'http', ...args], { timeout: 60_000 });
    const listed = JSON.parse((await inspector('--method', 'tools/list')).stdout) as { tools: { name: string; annotations: Record<string, boolean> }[] };
    expect(listed.tools.find((tool) => tool.name === 'notebook_create')?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(listed.tools.find((tool) => tool.name === 'notebook_list')?.annotations.readOnlyHint).toBe(true);

    const called = JSON.parse((await inspector('--method', 'tools/call', '--tool-name', 'notebook_create', '--tool-arg', 'name=From the Inspector')).stdout) as { structuredContent: { id: string } };
    const notebooks = await kernel.pipeline.call({ target: 'notebook_list', input: {}, principal: { kind: 'person', name: 'alice', role: 'admin' } });
    expect(notebooks).toMatchObject({ status: 'ok', value: { notebooks: [{ id: called.structuredContent.id, name: 'From the Inspector' }] } });
  });
});
