import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { hashArguments } from '../../../core/canonical-json.js';
import { useHarness } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';

const ADMIN = 'qk_admin-token-for-tests';
const READER = 'qk_reader-token-for-tests';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

const baseConfig: KernelConfigFile = {
  auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }, { name: 'viewer', role: 'reader', sha256: sha(READER) }] },
  server: { bodyLimitBytes: 4096 },
};

describe('HTTP API over a real loopback port', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve(config: KernelConfigFile = baseConfig, plugins = ['notes']): Promise<string> {
    const kernel = await harness.boot({ plugins, config });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return server.url;
  }

  const post = (url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) => rawRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  it('answers /healthz without a token', async () => {
    const url = await serve();
    const response = await rawRequest(`${url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ ok: true });
  });

  it('answers 401 without a token and with a wrong token, without an OAuth challenge', async () => {
    const url = await serve();
    const missing = await post(`${url}/api/actions/notes/note/get`, undefined, { name: 'a' });
    expect(missing.status).toBe(401);
    expect(missing.json().error?.code).toBe('UNAUTHENTICATED');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="quire"');
    const wrong = await post(`${url}/api/actions/notes/note/get`, `${ADMIN}x`, { name: 'a' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).not.toContain('resource_metadata');
    const basic = await rawRequest(`${url}/api/plugins`, { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('lets a reader read but answers 403 when a reader calls a write action', async () => {
    const url = await serve();
    expect((await post(`${url}/api/actions/notes/note/put`, ADMIN, { name: 'a', text: 'hi' })).status).toBe(200);
    const read = await post(`${url}/api/actions/notes/note/get`, READER, { name: 'a' });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual({ result: { name: 'a', text: 'hi' } });
    const write = await post(`${url}/api/actions/notes/note/put`, READER, { name: 'a', text: 'changed' });
    expect(write.status).toBe(403);
    expect(write.json().error?.code).toBe('FORBIDDEN');
    expect((await post(`${url}/api/actions/notes/note/get`, READER, { name: 'a' })).json()).toEqual({ result: { name: 'a', text: 'hi' } });
  });

  it('refuses a foreign Origin and a foreign Host with 403, and accepts its own origin', async () => {
    const url = await serve();
    const foreign = await post(`${url}/api/actions/notes/note/get`, ADMIN, { name: 'a' }, { origin: 'http://evil.example.com' });
    expect(foreign.status).toBe(403);
    expect(foreign.json().error?.code).toBe('ORIGIN_REFUSED');
    const otherPort = await post(`${url}/api/actions/notes/note/get`, ADMIN, { name: 'a' }, { origin: 'http://127.0.0.1:1' });
    expect(otherPort.status).toBe(403);
    const rebinding = await rawRequest(`${url}/healthz`, { headers: { host: 'evil.example.com' } });
    expect(rebinding.status).toBe(403);
    const own = await post(`${url}/api/actions/notes/note/put`, ADMIN, { name: 'a', text: 'x' }, { origin: url });
    expect(own.status).toBe(200);
  });

  it('accepts a configured origin and host behind a proxy', async () => {
    const url = await serve({ ...baseConfig, server: { allowedHosts: ['notes.example.com'], allowedOrigins: ['https://notes.example.com'] } });
    const proxied = await post(`${url}/api/actions/notes/note/put`, ADMIN, { name: 'a', text: 'x' }, { host: 'notes.example.com', origin: 'https://notes.example.com' });
    expect(proxied.status).toBe(200);
  });

  it('answers 400 naming the JSON pointer of invalid input, and never runs the handler', async () => {
    const url = await serve();
    const response = await post(`${url}/api/actions/notes/note/put`, ADMIN, { name: 'ok', text: 42 });
    expect(response.status).toBe(400);
    const { error } = response.json();
    expect(error?.code).toBe('INVALID_INPUT');
    expect(error?.message).toContain('/text');
    expect(error?.details.issues).toEqual([expect.objectContaining({ pointer: '/text' })]);
    expect((await post(`${url}/api/actions/notes/note/get`, ADMIN, { name: 'ok' })).status).toBe(404);
  });

  it('answers 400 for a body that is not JSON and 415 for one that is not sent as JSON', async () => {
    const url = await serve();
    const broken = await post(`${url}/api/actions/notes/note/get`, ADMIN, '{"name": ');
    expect(broken.status).toBe(400);
    expect(broken.json().error?.code).toBe('INVALID_JSON');
    const form = await post(`${url}/api/actions/notes/note/get`, ADMIN, 'name=a', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
  });

  it('answers 404 for an unknown action and an unknown route, as JSON', async () => {
    const url = await serve();
    const unknown = await post(`${url}/api/actions/notes/note/explode`, ADMIN, {});
    expect(unknown.status).toBe(404);
    expect(unknown.json().error?.code).toBe('ACTION_NOT_FOUND');
    const route = await rawRequest(`${url}/api/nothing`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(route.status).toBe(404);
    expect(route.json().error?.code).toBe('NOT_FOUND');
  });

  it('answers 413 for a body over the limit, declared or streamed, and stores nothing', async () => {
    const url = await serve();
    // Chunked: no Content-Length, so the limit is enforced while reading.
    const response = await post(`${url}/api/actions/notes/note/put`, ADMIN, { name: 'big', text: 'x'.repeat(10_000) });
    expect(response.status).toBe(413);
    expect(response.json().error?.code).toBe('PAYLOAD_TOO_LARGE');
    // Which setting to raise: an action's schema allows more (a note's 4,000,000 characters) than the default 1 MiB.
    expect(response.json().error?.message).toContain('the limit server.bodyLimitBytes sets in quire.json');
    expect(response.json().error?.details).toMatchObject({ field: '/server/bodyLimitBytes' });
    const body = JSON.stringify({ name: 'big', text: 'y'.repeat(10_000) });
    const declared = await post(`${url}/api/actions/notes/note/put`, ADMIN, body, { 'content-length': String(Buffer.byteLength(body)) });
    expect(declared.status).toBe(413);
    const fits = JSON.stringify({ name: 'small', text: 'z'.repeat(100) });
    expect((await post(`${url}/api/actions/notes/note/put`, ADMIN, fits, { 'content-length': String(Buffer.byteLength(fits)) })).status).toBe(200);
    expect((await post(`${url}/api/actions/notes/note/get`, ADMIN, { name: 'big' })).status).toBe(404);
  });

  it('lists plugins with the effects of each action, and a disabled plugin with no tools', async () => {
    const url = await serve({ ...baseConfig, plugins: { egress: { enabled: false } } }, ['notes', 'egress']);
    const response = await rawRequest(`${url}/api/plugins`, { headers: { authorization: `Bearer ${READER}` } });
    expect(response.status).toBe(200);
    const plugins = response.json().plugins as { id: string; state: string; tools: { actions: { name: string; effects: string[]; destructive: boolean }[] }[]; file?: string }[];
    const notes = plugins.find((plugin) => plugin.id === 'notes');
    expect(notes?.state).toBe('active');
    expect(notes?.tools[0]?.actions.map((action) => [action.name, action.effects, action.destructive])).toEqual([
      ['get', [], false], ['put', ['localWrite'], false], ['delete', ['localWrite'], true],
    ]);
    expect(notes?.file).toBeUndefined();
    const egress = plugins.find((plugin) => plugin.id === 'egress');
    expect(egress).toMatchObject({ state: 'disabled', enabled: false, tools: [] });
    const call = await post(`${url}/api/actions/egress/net/fetch_quiet`, ADMIN, { url: 'http://127.0.0.1:9' });
    expect(call.status).toBe(404);
  });

  it('lists, creates and revokes grants for administrators only', async () => {
    const url = await serve();
    const auth = { authorization: `Bearer ${ADMIN}` };
    expect((await rawRequest(`${url}/api/grants`, { headers: { authorization: `Bearer ${READER}` } })).status).toBe(403);
    // A grant for a notebook that is not there could never match: refused, naming the field (it was made).
    const nowhere = await post(`${url}/api/grants`, ADMIN, { plugin: 'notes', tool: 'note', action: 'put', notebook: 'nb1' });
    expect([nowhere.status, nowhere.json().error?.code, nowhere.json().error?.details?.field]).toEqual([404, 'NOT_FOUND', 'notebook']);
    const created = await post(`${url}/api/grants`, ADMIN, { plugin: 'notes', tool: 'note', action: 'put' });
    expect(created.status).toBe(201);
    const grant = created.json().grant as { id: string; effects: string[] };
    expect(grant.effects).toEqual(['localWrite']);
    expect((await rawRequest(`${url}/api/grants`, { headers: auth })).json().grants).toEqual([expect.objectContaining({ id: grant.id })]);
    expect((await rawRequest(`${url}/api/grants/${grant.id}`, { method: 'DELETE', headers: auth })).status).toBe(200);
    expect((await rawRequest(`${url}/api/grants`, { headers: auth })).json().grants).toEqual([]);
    const again = await rawRequest(`${url}/api/grants/${grant.id}`, { method: 'DELETE', headers: auth });
    expect(again.status).toBe(404);
    expect(again.json().error?.code).toBe('GRANT_NOT_FOUND');
    const bad = await post(`${url}/api/grants`, ADMIN, { plugin: 'notes', tool: 'note' });
    expect(bad.status).toBe(400);
    expect(bad.json().error?.message).toContain('/action');
  });

  it('answers a pending confirmation once, for the arguments shown', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: baseConfig });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const outcome = await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: { kind: 'agent', name: 'agent:s/t/c', role: 'admin' } });
    if (outcome.status !== 'confirmation_required') throw new Error('expected a confirmation');
    const { id, argsHash } = outcome.confirmation;
    const listed = await rawRequest(`${server.url}/api/confirmations?status=pending`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(listed.json().confirmations).toEqual([expect.objectContaining({ id, argsHash, effects: ['localWrite'] })]);
    expect((await post(`${server.url}/api/confirmations/${id}/answer`, READER, { approved: true, argsHash })).status).toBe(403);
    const mismatch = await post(`${server.url}/api/confirmations/${id}/answer`, ADMIN, { approved: true, argsHash: hashArguments({ other: 1 }) });
    expect(mismatch.status).toBe(409);
    expect(mismatch.json().error?.code).toBe('CONFIRMATION_ARGS_MISMATCH');
    expect((await post(`${server.url}/api/confirmations/${id}/answer`, ADMIN, { approved: true, argsHash })).status).toBe(200);
    const twice = await post(`${server.url}/api/confirmations/${id}/answer`, ADMIN, { approved: false, argsHash });
    expect(twice.status).toBe(409);
    expect(twice.json().error?.code).toBe('CONFIRMATION_ALREADY_ANSWERED');
  });
});
