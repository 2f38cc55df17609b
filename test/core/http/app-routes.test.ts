import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import { HTTP_STATUS } from '../../../core/http/status-table.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_route-admin';
const READER = 'qk_route-reader';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
const config: KernelConfigFile = {
  auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }, { name: 'viewer', role: 'reader', sha256: sha(READER) }] },
};

describe('HTTP routes (app.request)', () => {
  const harness = useHarness();

  async function app() {
    return createHttpApp(await harness.boot({
      plugins: ['notes'],
      config: { ...config, plugins: { broken: { enabled: false } } },
      userPlugins: { broken: { manifest: { id: 'broken' }, code: '' } },
    }));
  }

  const call = (token: string, body?: unknown, method = 'POST') => ({
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

  it('streams an attachment with its length, and answers HEAD without opening it for good', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config });
    const routes = createHttpApp(kernel);
    await mkdir(join(kernel.workspace.root, 'assets'), { recursive: true });
    const bytes = Buffer.alloc(300_000, 7);
    await writeFile(join(kernel.workspace.root, 'assets', 'big.png'), bytes);
    const got = await routes.request('/api/assets/big.png', call(ADMIN, undefined, 'GET'));
    expect([got.status, got.headers.get('content-length'), Buffer.from(await got.arrayBuffer()).equals(bytes)]).toEqual([200, '300000', true]);
    const open = (): number => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) {
      const head = await routes.request('/api/assets/big.png', call(ADMIN, undefined, 'HEAD'));
      expect([head.status, head.headers.get('content-length')]).toEqual([200, '300000']);
    }
    // Each HEAD kept a file open (a stream opened for a body never read): 20 more.
    expect(open() - before).toBeLessThan(5);
  });

  it('maps every error code to a client or server status', () => {
    for (const [code, status] of Object.entries(HTTP_STATUS)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
    }
  });

  it('passes a plugin\'s typed error through to its status, wrapped with the plugin id', async () => {
    const routes = await app();
    const response = await routes.request('/api/actions/notes/note/get', call(ADMIN, { name: 'missing' }));
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.details.plugin).toBe('notes');
  });

  it('shows readers no file paths and no manifest problems', async () => {
    const routes = await app();
    const asReader = (await (await routes.request('/api/plugins', call(READER, undefined, 'GET'))).json()) as { plugins: Record<string, unknown>[] };
    expect(asReader.plugins.every((plugin) => plugin.file === undefined && plugin.issues === undefined)).toBe(true);
    const asAdmin = (await (await routes.request('/api/plugins', call(ADMIN, undefined, 'GET'))).json()) as { plugins: Record<string, unknown>[] };
    const broken = asAdmin.plugins.find((plugin) => plugin.id === 'broken');
    expect(broken).toMatchObject({ state: 'invalid', enabled: false });
    expect(broken?.issues).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'MANIFEST_FIELD_MISSING', pointer: '/version' })]));
  });

  it('names an unknown confirmation status instead of ignoring it', async () => {
    const routes = await app();
    const response = await routes.request('/api/confirmations?status=maybe', call(ADMIN, undefined, 'GET'));
    expect(response.status).toBe(400);
  });

  it('keeps every route on Hono\'s RegExp router, and a turn path other than cancel is not found', async () => {
    const routes = await app();
    const created = (await (await routes.request('/api/agent/sessions', call(ADMIN, {}))).json()) as { session: { id: string } };
    const other = await routes.request(`/api/agent/sessions/${created.session.id}/turns/stop`, call(ADMIN, {}));
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const cancel = await routes.request(`/api/agent/sessions/${created.session.id}/turns/cancel`, call(ADMIN, {}));
    expect(await cancel.json()).toMatchObject({ cancelled: false });
    // A route pattern the RegExp router cannot take sends the whole app to the slower trie router.
    expect(routes.router.name).toBe('SmartRouter + RegExpRouter');
  });

  it('answers /healthz and refuses a foreign Host even there', async () => {
    const routes = await app();
    expect((await routes.request('/healthz')).status).toBe(200);
    expect((await routes.request('http://evil.example.com/healthz')).status).toBe(403);
  });
});
