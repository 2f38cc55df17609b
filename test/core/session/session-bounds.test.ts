import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import type { Kernel } from '../../../core/kernel.js';
import { caught, useHarness } from '../../helpers/harness.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';

const ADMIN = 'qk_session-bounds-admin';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
// A body limit large enough that the bounds of the session, not the body size, are what answers.
const config: KernelConfigFile = { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }] }, server: { bodyLimitBytes: 8 * 1024 * 1024 } };

/** `depth` nested arrays (or objects under key `a`), written as text: building them as values would recurse. */
function nestedText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('bounds of a saved session', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(): Promise<{ url: string; kernel: Kernel }> {
    const kernel = await harness.boot({ config });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { url: server.url, kernel };
  }

  const send = (method: string, url: string, body: string): Promise<RawResponse> =>
    rawRequest(url, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body });

  async function newSession(url: string): Promise<string> {
    const created = await send('POST', `${url}/api/agent/sessions`, '{}');
    expect(created.status).toBe(201);
    return (created.json() as unknown as { session: { id: string } }).session.id;
  }

  it('answers 400 naming the field for an unknown field nested thousands deep, at the top or in an entry', async () => {
    const { url } = await serve();
    const id = await newSession(url);
    const cases: [string, string][] = [];
    for (const depth of [200, 10_000, 100_000, 1_000_000]) {
      for (const kind of ['array', 'object'] as const) {
        if (kind === 'object' && depth > 100_000) continue; // over the body limit
        cases.push([`deep`, `{"entries":[],"deep":${nestedText(depth, kind)}}`]);
        cases.push([`entries`, `{"entries":[{"id":"u1","type":"user","content":"hi","meta":${nestedText(depth, kind)}}]}`]);
      }
    }
    for (const [field, body] of cases) {
      for (const method of ['PUT', 'POST'] as const) {
        const target = method === 'PUT' ? `${url}/api/agent/sessions/${id}` : `${url}/api/agent/sessions`;
        const answer = await send(method, target, body);
        expect([method, field, answer.status, answer.json().error?.code]).toEqual([method, field, 400, 'INVALID_INPUT']);
        if (method === 'PUT') expect(answer.json().error?.details.field).toBe(field);
      }
    }
    // Nothing was kept, and the session still reads and saves.
    const read = await rawRequest(`${url}/api/agent/sessions/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect([read.status, JSON.stringify(read.json()).includes('"deep"')]).toEqual([200, false]);
    const kept = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [], note: { a: [1, { b: 'c' }] } }));
    expect([kept.status, (kept.json() as unknown as { session: { note: unknown } }).session.note]).toEqual([200, { a: [1, { b: 'c' }] }]);
  });

  it('answers 400 naming the field when kept unknown fields are too large, one or together', async () => {
    const { url } = await serve();
    const id = await newSession(url);
    const big = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [], blob: 'é'.repeat(40_000) }));
    expect([big.status, big.json().error?.code, big.json().error?.details.field]).toEqual([400, 'INVALID_INPUT', 'blob']);
    const many: Record<string, unknown> = { entries: [] };
    for (let i = 0; i < 40; i++) many[`field${i}`] = 'x'.repeat(10_000);
    const together = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify(many));
    expect([together.status, together.json().error?.code]).toEqual([400, 'INVALID_INPUT']);
    expect(String(together.json().error?.details.field)).toMatch(/^field\d+$/);
  });

  it('answers 400 naming the field for entries the kernel could not read back, and for a title past 500 characters', async () => {
    const { url } = await serve();
    const id = await newSession(url);
    const cases: [unknown, string][] = [
      [{ entries: [{ id: 'u', type: 'user', content: 'hi' }, { id: 'a', type: 'assistant', toolCalls: 'x' }] }, '/entries/1/toolCalls'],
      [{ entries: [{ id: 'a', type: 'assistant', toolCalls: [null] }] }, '/entries/0/toolCalls/0'],
      [{ entries: [{ id: 'u', type: 'someone', content: 'hi' }] }, '/entries/0/type'],
      [{ entries: [{ id: 'u', type: 'user', content: 42 }] }, '/entries/0/content'],
      [{ entries: [], title: 't'.repeat(501) }, '/title'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify(body));
      expect([pointer, answer.status, answer.json().error?.code, JSON.stringify(answer.json().error)]).toEqual([pointer, 400, 'INVALID_INPUT', expect.stringContaining(pointer)]);
    }
    // The session still reads, and a turn's preview answers.
    const preview = await rawRequest(`${url}/api/agent/sessions/${id}/preview?message=hi`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(preview.status).not.toBe(500);
  });

  it('refuses a too deep value saved by the kernel itself, not only over HTTP', async () => {
    const { kernel } = await serve();
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i++) deep = [deep];
    const error = await caught(kernel.sessions.save({ id: '20260101000000-abcdefg', entries: [{ id: 'u1', type: 'user', toolCalls: [{ id: 'c', name: 'x', arguments: deep }] }] }));
    expect([error.code, error.details?.field]).toEqual(['INVALID_INPUT', 'entries']);
  });

  it('still saves a session stored with a large field of its own before the bounds, while that field is left as it is', async () => {
    const { url, kernel } = await serve();
    const id = '20260101000000-legacy1';
    const folder = join(kernel.workspace.agentDir, 'sessions', id);
    await mkdir(folder, { recursive: true });
    const legacy = { id, entries: [], revision: 3, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', big: 'x'.repeat(100_000) };
    await writeFile(join(folder, 'session.json'), JSON.stringify(legacy));
    const untouched = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [{ id: 'u1', type: 'user', content: 'hi' }], expectedRevision: 3 }));
    expect(untouched.status).toBe(200);
    const resent = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [], expectedRevision: 4, big: legacy.big }));
    expect(resent.status).toBe(200);
    const changed = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [], expectedRevision: 5, big: `${legacy.big}y` }));
    expect([changed.status, changed.json().error?.details.field]).toEqual([400, 'big']);
    const added = await send('PUT', `${url}/api/agent/sessions/${id}`, JSON.stringify({ entries: [], expectedRevision: 5, small: 'z'.repeat(60_000) }));
    expect([added.status, added.json().error?.code]).toEqual([200, undefined]);
  });
});
