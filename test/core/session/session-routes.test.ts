import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_sessions-admin';
const READER = 'qk_sessions-reader';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
const config: KernelConfigFile = { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }, { name: 'viewer', role: 'reader', sha256: sha(READER) }] } };

interface Saved { revision: number; session: { id: string; title?: string; entries: unknown[]; revision: number } }

describe('agent sessions over HTTP', () => {
  const harness = useHarness();
  const request = (method: string, body?: unknown, token = ADMIN) => ({
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

  it('creates, lists, reads, saves and deletes a session, and answers a stale save with 409 and the revision', async () => {
    const kernel = await harness.boot({ config });
    const app = createHttpApp(kernel);
    const created = await app.request('/api/agent/sessions', request('POST', { title: 'Planning' }));
    expect(created.status).toBe(201);
    const { session } = (await created.json()) as Saved;
    const saved = await app.request(`/api/agent/sessions/${session.id}`, request('PUT', { entries: [{ id: 'u1', type: 'user', content: 'hi' }], expectedRevision: 1 }));
    expect([saved.status, ((await saved.json()) as Saved).revision]).toEqual([200, 2]);
    const stale = await app.request(`/api/agent/sessions/${session.id}`, request('PUT', { entries: [], expectedRevision: 1 }));
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { details: { revision: number } } }).error.details.revision).toBe(2);
    const read = (await (await app.request(`/api/agent/sessions/${session.id}`, request('GET'))).json()) as { session: { title: string; entries: unknown[] } };
    expect([read.session.title, read.session.entries.length]).toEqual(['Planning', 1]);
    const listed = (await (await app.request('/api/agent/sessions?title=plan', request('GET'))).json()) as { total: number };
    expect(listed.total).toBe(1);
    // A page that is no whole number from 1 is refused naming it (it was taken as page 1).
    for (const query of ['page=abc', 'page=0', 'pageSize=-5']) {
      const refused = await app.request(`/api/agent/sessions?${query}`, request('GET'));
      expect([query, refused.status, ((await refused.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([query, 400, query.split('=')[0]]);
    }
    expect((await app.request('/api/agent/sessions?page=2&pageSize=10', request('GET'))).status).toBe(200);
    expect((await app.request(`/api/agent/sessions/${session.id}`, request('DELETE'))).status).toBe(204);
    expect((await app.request(`/api/agent/sessions/${session.id}`, request('GET'))).status).toBe(404);
  });

  it('renames a session past the body limit with a save that leaves its entries out (they are kept)', async () => {
    const kernel = await harness.boot({ config });
    const app = createHttpApp(kernel);
    const { session } = (await (await app.request('/api/agent/sessions', request('POST', { title: 'Long' }))).json()) as Saved;
    // Some 1.2 MB of history, as a turn of long tool results leaves it: more than a request body may be (1 MiB).
    const entries = Array.from({ length: 30 }, (_, i) => ({ id: `a${i}`, type: 'assistant', content: 'x'.repeat(40_000) }));
    await kernel.sessions.save({ id: session.id, title: 'Long', entries, expectedRevision: 1 });
    const renamed = await app.request(`/api/agent/sessions/${session.id}`, request('PUT', { title: 'Renamed', expectedRevision: 2 }));
    expect(renamed.status).toBe(200);
    const read = (await (await app.request(`/api/agent/sessions/${session.id}`, request('GET'))).json()) as Saved;
    expect([read.session.title, read.session.entries.length, read.session.revision]).toEqual(['Renamed', 30, 3]);
  });

  it('refuses to delete a session while a turn runs, and keeps readers out', async () => {
    const kernel = await harness.boot({ config });
    const app = createHttpApp(kernel);
    const { session } = (await (await app.request('/api/agent/sessions', request('POST', {}))).json()) as Saved;
    kernel.sessions.setStreaming(session.id, true);
    expect((await app.request(`/api/agent/sessions/${session.id}`, request('DELETE'))).status).toBe(409);
    expect((await app.request('/api/agent/sessions', request('GET', undefined, READER))).status).toBe(403);
    expect((await app.request('/api/agent/sessions/../grants', request('GET'))).status).not.toBe(200);
    expect((await app.request('/api/agent/sessions/not-an-id', request('GET'))).status).toBe(400);
  });

  it('sets the session mode, and refuses auto when the administrator forbids it', async () => {
    const allowed = createHttpApp(await harness.boot({ config }));
    const { session } = (await (await allowed.request('/api/agent/sessions', request('POST', {}))).json()) as Saved;
    expect((await allowed.request(`/api/agent/sessions/${session.id}/mode`, request('PUT', { mode: 'auto' }))).status).toBe(200);
    const read = (await (await allowed.request(`/api/agent/sessions/${session.id}`, request('GET'))).json()) as { session: { permissionMode: string } };
    expect(read.session.permissionMode).toBe('auto');
    const strict = createHttpApp(await harness.boot({ config: { ...config, gate: { allowAutoMode: false } } }));
    const other = (await (await strict.request('/api/agent/sessions', request('POST', {}))).json()) as Saved;
    expect((await strict.request(`/api/agent/sessions/${other.session.id}/mode`, request('PUT', { mode: 'auto' }))).status).toBe(403);
  });
});
