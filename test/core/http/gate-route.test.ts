import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { useHarness } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { connectMcp } from '../../helpers/mcp-client.js';

const ADMIN = 'qk_gate-admin';
const READER = 'qk_gate-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: sha(ADMIN) }, { name: 'rita', role: 'reader' as const, sha256: sha(READER) }] };

describe('notebook privacy over HTTP and MCP', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  it('a person sets it with notebook_set_privacy; GET /api/gate and the notebook list show it; MCP does not serve the action; readers get 403', async () => {
    const kernel = await harness.boot({ realManifests: true, config: { auth, plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const request = (token: string, method: string, path: string, body?: unknown) => rawRequest(`${server.url}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const created = ((await request(ADMIN, 'POST', '/api/actions/blocks/notebook/create', { name: 'Diary' })).json() as { result: { id: string; agent: string; egress: string } }).result;
    expect(created).toMatchObject({ agent: 'write', egress: 'allowed' });
    const set = await request(ADMIN, 'POST', '/api/actions/blocks/notebook/set_privacy', { id: created.id, agent: 'none', egress: 'local-only' });
    expect([set.status, set.json()]).toEqual([200, { result: expect.objectContaining({ id: created.id, agent: 'none', egress: 'local-only' }) }]);
    const empty = await request(ADMIN, 'POST', '/api/actions/blocks/notebook/set_privacy', { id: created.id });
    expect(empty.status).toBe(400);
    const listed = (await request(ADMIN, 'POST', '/api/actions/blocks/notebook/list', {})).json() as { result: { notebooks: { id: string; agent: string; egress: string }[] } };
    expect(listed.result.notebooks).toEqual([expect.objectContaining({ id: created.id, agent: 'none', egress: 'local-only' })]);
    const gate = await request(ADMIN, 'GET', '/api/gate');
    expect([gate.status, gate.json()]).toEqual([200, { allowAutoMode: true, deny: [], grants: 0, notebooks: [{ id: created.id, name: 'Diary', agent: 'none', egress: 'local-only' }] }]);
    expect((await request(READER, 'GET', '/api/gate')).status).toBe(403);
    // Back to the defaults: the file leaves them out again.
    await request(ADMIN, 'POST', '/api/actions/blocks/notebook/set_privacy', { id: created.id, agent: 'write', egress: 'allowed' });
    expect(((await request(ADMIN, 'GET', '/api/gate')).json() as { notebooks: unknown[] }).notebooks).toEqual([{ id: created.id, name: 'Diary', agent: 'write', egress: 'allowed' }]);

    const client = await connectMcp(server.url, ADMIN);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('notebook_rename');
      // A person's settings: not served to MCP clients, which are agents.
      expect(names).not.toContain('notebook_set_privacy');
      expect(names).not.toContain('notebook_set_access');
    } finally {
      await client.close();
    }
  });
});
