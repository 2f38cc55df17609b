import { createHash } from 'node:crypto';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, describe, expect, it } from 'vitest';
import { generateClientSource } from '../../../core/client/generate/generate-client.js';
import { CLIENT_KERNEL_CONFIG } from '../../../core/client/generate/write-client.js';
import { createQuireClient, QuireApiError, type OperationId, type QuireClient } from '../../../core/client/quire-client.js';
import { createHttpApp } from '../../../core/http/app.js';
import { ROUTE_DOCS } from '../../../core/http/openapi/route-docs.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import type { Kernel } from '../../../core/kernel.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_openapi-admin';
const READER = 'qk_openapi-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const auth = { tokens: [{ name: 'alice', role: 'admin' as const, sha256: sha(ADMIN) }, { name: 'rita', role: 'reader' as const, sha256: sha(READER) }] };

type Doc = { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, { content?: Record<string, { schema: unknown }>; 'x-quire-error-codes'?: string[] }>; 'x-quire-effects'?: string[]; 'x-quire-role'?: string }>>; components: { schemas: Record<string, unknown> } };

describe('the OpenAPI document', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  async function serve(): Promise<{ kernel: Kernel; url: string; doc: Doc }> {
    const kernel = await harness.boot({ realManifests: true, config: { auth, ...CLIENT_KERNEL_CONFIG } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const response = await fetch(`${server.url}/api/openapi.json`);
    expect(response.status).toBe(200);
    return { kernel, url: server.url, doc: await response.json() as Doc };
  }

  it('is valid OpenAPI 3.1 (a real validator), served without a token, and the committed client is generated from it', async () => {
    const { doc } = await serve();
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const committed = await readFile(join(REPO_ROOT, 'core', 'client', 'api-schema.ts'), 'utf8');
    // Out of step: run `npm run generate:client`.
    expect(generateClientSource(doc as Parameters<typeof generateClientSource>[0])).toBe(committed);
  });

  it('describes every route the app serves and nothing it does not, and every action with its schema, effects and role', async () => {
    const { kernel, doc } = await serve();
    const served = createHttpApp(kernel).routes
      .filter((route) => route.method !== 'ALL' || route.path === '/mcp')
      .filter((route, index, all) => all.findIndex((other) => other.method === route.method && other.path === route.path) === index);
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })));
    const pattern = (path: string) => new RegExp(`^${path.replace(/\{\w+\}|:\w+/g, '[^/]+')}$`);
    for (const route of served) {
      const methods = route.method === 'ALL' ? ['GET', 'POST', 'DELETE'] : [route.method];
      for (const method of methods) expect(documented.some((entry) => entry.method === method && (pattern(route.path).test(entry.path) || pattern(entry.path).test(route.path))), `${method} ${route.path}`).toBe(true);
    }
    for (const entry of documented) {
      expect(served.some((route) => (route.method === entry.method || route.method === 'ALL') && pattern(route.path).test(entry.path.replace(/\{\w+\}/g, 'x'))), `${entry.method} ${entry.path}`).toBe(true);
    }
    const actions = kernel.registry.list().filter((action) => action.spec.agentOnly !== true);
    expect(actions.length).toBeGreaterThan(50);
    for (const action of actions) {
      const operation = doc.paths[`/api/actions/${action.pluginId}/${action.tool}/${action.action}`]?.post;
      expect(operation?.operationId, action.wireName).toBe(action.wireName);
      expect(doc.components.schemas[`${action.wireName}_input`]).toEqual(JSON.parse(JSON.stringify(action.spec.input)));
      expect(operation!['x-quire-effects']).toEqual([...action.effects]);
      // A reader may call what has no effects, unless the action is for administrators (sql, snapshots' and skills' reads).
      expect(operation!['x-quire-role'], action.wireName).toBe(action.effects.length > 0 || action.spec.adminOnly === true ? 'admin' : 'reader');
    }
    // Route bodies are the routes' own schemas.
    for (const route of ROUTE_DOCS.filter((entry) => entry.body)) {
      expect(doc.paths[route.path]![route.method]!.requestBody!.content['application/json']!.schema).toEqual(JSON.parse(JSON.stringify(route.body)));
    }
  });

  it('real answers of every route match the documented response schemas, through the typed client', async () => {
    const { kernel, url, doc } = await serve();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: 'quire:openapi' });
    const byId = new Map(Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => [operation.operationId, { path, method, operation }] as const)));
    const seen = new Set<string>();
    /** One call through the typed client: its status must be documented, its JSON must fit the schema there. */
    const check = async (client: QuireClient, id: OperationId, request?: object): Promise<{ status: number; body: unknown }> => {
      const found = byId.get(id)!;
      const response = await (client.request as (id: OperationId, request?: object) => Promise<Response>)(id, request);
      const documented = found.operation.responses[String(response.status)];
      expect(documented, `${id} answered ${response.status}, which is not documented`).toBeDefined();
      const type = (response.headers.get('content-type') ?? '').split(';')[0]!;
      const text = await response.text();
      seen.add(id);
      if (type !== 'application/json') {
        // A stream, a page or nothing (204): documented with that media type, or without content.
        const media = Object.keys(documented!.content ?? {});
        if (text === '') expect(media).toEqual([]);
        else expect(media.map((entry) => entry.split(';')[0])).toContain(type);
        return { status: response.status, body: text };
      }
      const body = JSON.parse(text) as unknown;
      const pointer = `quire:openapi#/paths/${found.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${found.method}/responses/${response.status}/content/application~1json/schema`;
      const valid = ajv.validate({ $ref: pointer }, body);
      expect(valid, `${id} ${response.status}: ${ajv.errorsText(ajv.errors)}\n${text.slice(0, 400)}`).toBe(true);
      if (response.status >= 400) expect(documented!['x-quire-error-codes']).toContain((body as { error: { code: string } }).error.code);
      return { status: response.status, body };
    };
    const admin = createQuireClient({ baseUrl: url, token: ADMIN });
    const reader = createQuireClient({ baseUrl: url, token: READER });
    const anonymous = createQuireClient({ baseUrl: url });

    await check(anonymous, 'health');
    expect((await check(reader, 'me')).body).toEqual({ kind: 'person', name: 'rita', role: 'reader' });
    expect((await check(admin, 'me')).body).toEqual({ kind: 'person', name: 'alice', role: 'admin' });
    expect((await check(anonymous, 'listPlugins')).status).toBe(401);
    await check(reader, 'listPlugins');
    await check(admin, 'listPlugins');
    expect((await check(reader, 'gate')).status).toBe(403);
    await check(admin, 'setPluginEnabled', { params: { id: 'todo' }, body: { enabled: false } });
    await check(admin, 'setPluginEnabled', { params: { id: 'todo' }, body: { enabled: true } });
    expect((await check(admin, 'setPluginEnabled', { params: { id: 'todo' }, body: { enabled: 'yes' } })).status).toBe(400);
    const notebook = (await check(admin, 'callAction', { params: { plugin: 'blocks', tool: 'notebook', action: 'create' }, body: { name: 'Work' } })).body as { result: { id: string } };
    await check(admin, 'notebook_create', { body: { name: 'Home' } });
    expect((await check(reader, 'notebook_create', { body: { name: 'Nope' } })).status).toBe(403);
    await check(reader, 'notebook_list', { body: {} });
    await check(admin, 'document_create', { body: { notebook: notebook.result.id, title: 'Plans', markdown: 'A paragraph.' } });
    await check(admin, 'search_fulltext', { body: { query: 'paragraph' } });
    expect((await check(admin, 'block_get', { body: { id: '20200101000000-aaaaaaa' } })).status).toBe(404);
    await check(admin, 'usage', { query: { by: 'model' } });
    expect((await check(admin, 'usage', { query: { by: 'year' } })).status).toBe(400);
    await check(admin, 'gate');
    await check(admin, 'listGrants');
    const grant = (await check(admin, 'createGrant', { body: { plugin: 'blocks', tool: 'notebook', action: 'create' } })).body as { grant: { id: string } };
    await check(admin, 'revokeGrant', { params: { id: grant.grant.id } });
    expect((await check(admin, 'createGrant', { body: { plugin: 'blocks', tool: 'nothing', action: 'here' } })).status).toBe(404);
    await check(admin, 'listConfirmations', { query: { status: 'pending' } });
    expect((await check(admin, 'getConfirmation', { params: { id: 'none' } })).status).toBe(404);
    expect((await check(admin, 'answerConfirmation', { params: { id: 'none' }, body: { approved: true, argsHash: 'a'.repeat(64) } })).status).toBe(404);
    await check(admin, 'auditLog', { query: { limit: 5 } });
    await check(admin, 'auditLog', { query: { outcome: 'ok', plugin: 'blocks', principal: 'alice' } });
    expect((await check(admin, 'auditLog', { query: { outcome: 'maybe' } })).status).toBe(400);
    expect((await check(reader, 'auditLog')).status).toBe(403);
    await check(admin, 'verifyAudit');
    await check(admin, 'listJobs');
    expect((await check(admin, 'getJob', { params: { id: 'none' } })).status).toBe(404);
    expect((await check(admin, 'cancelJob', { params: { id: 'none' } })).status).toBe(404);
    expect((await check(admin, 'jobEvents', { params: { id: 'none' } })).status).toBe(404);
    const session = (await check(admin, 'createSession', { body: { title: 'Plans' } })).body as { session: { id: string; revision: number } };
    const id = session.session.id;
    await check(admin, 'listSessions', { query: { page: 1, pageSize: 10 } });
    await check(admin, 'getSession', { params: { id } });
    await check(admin, 'saveSession', { params: { id }, body: { entries: [{ id: 'e1', type: 'user', content: 'hello' }], expectedRevision: session.session.revision } });
    expect((await check(admin, 'saveSession', { params: { id }, body: { entries: [], expectedRevision: 0 } })).status).toBe(409);
    await check(admin, 'previewRequest', { params: { id }, query: { message: 'next' } });
    await check(admin, 'pendingInSession', { params: { id } });
    await check(admin, 'setSessionMode', { params: { id }, body: { mode: 'confirm' } });
    await check(admin, 'cancelTurn', { params: { id } });
    await check(admin, 'startTurn', { params: { id }, body: { message: 'hello' } });
    expect((await check(admin, 'rollbackTurn', { params: { id, turnId: 'none' }, body: {} })).status).toBe(404);
    expect((await check(admin, 'answerSessionConfirmation', { params: { id, confirmationId: 'none' }, body: { approved: true, argsHash: 'x' } })).status).toBe(404);
    expect((await check(admin, 'answerQuestion', { params: { id, questionId: 'none' }, body: { answers: [['a']] } })).status).toBe(404);
    await check(admin, 'deleteSession', { params: { id } });
    await check(admin, 'listMcpServers');
    expect((await check(admin, 'approveMcpTool', { params: { name: 'none', tool: 'x' }, body: { hash: 'h' } })).status).toBe(404);
    await check(anonymous, 'openApiDocument');
    const page = await check(anonymous, 'webApp');
    const script = /src="\/app\/assets\/([^"]+)"/.exec(String(page.body))![1]!;
    await check(anonymous, 'webAppAsset', { params: { file: script } });
    expect((await check(anonymous, 'webAppAsset', { params: { file: 'nothing.js' } })).status).toBe(404);
    expect((await check(admin, 'getAsset', { params: { name: 'photo.png' } })).status).toBe(404);
    await mkdir(join(kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'assets', 'photo.png'), Buffer.from('89504e47', 'hex'));
    expect((await check(admin, 'getAsset', { params: { name: 'photo.png' } })).status).toBe(200);
    const asset = await admin.request('getAsset', { params: { name: 'photo.png' } });
    expect([asset.headers.get('content-type'), asset.headers.get('content-security-policy')]).toEqual(['image/png', "default-src 'none'; sandbox"]);
    expect((await reader.request('getAsset', { params: { name: 'photo.png' } })).status).toBe(403);
    // A link in assets/ to a file outside it (a synced or cloned workspace may hold one) and a file in a
    // hidden folder serve nothing; a link inside assets/ is served.
    await writeFile(join(kernel.workspace.root, 'outside.txt'), 'secret');
    await symlink(join(kernel.workspace.root, 'outside.txt'), join(kernel.workspace.root, 'assets', 'away.png'));
    await symlink(join(kernel.workspace.root, 'assets', 'photo.png'), join(kernel.workspace.root, 'assets', 'again.png'));
    await writeFile(join(kernel.workspace.root, 'assets', '.env'), 'secret');
    await symlink(join(kernel.workspace.root, 'assets', '.env'), join(kernel.workspace.root, 'assets', 'alias.png'));
    await mkdir(join(kernel.workspace.root, 'assets', 'sub', '.hidden'), { recursive: true });
    await writeFile(join(kernel.workspace.root, 'assets', 'sub', '.hidden', 'key.png'), 'secret');
    for (const name of ['away.png', 'alias.png', 'sub/.hidden/key.png', 'sub', 'sub/../photo.png']) {
      const refused = await admin.request('getAsset', { params: { name } });
      expect([name, refused.status, (await refused.text()).includes('secret')]).toEqual([name, 404, false]);
    }
    expect((await admin.request('getAsset', { params: { name: 'again.png' } })).status).toBe(200);
    // No Strict-Transport-Security over plain HTTP (behind a TLS proxy it is the proxy's to send).
    expect((await anonymous.request('webApp')).headers.get('strict-transport-security')).toBeNull();

    // A long action answers 202 with its job (or its result when it ends within Prefer: wait).
    const job = await check(admin, 'index_rebuild', { body: {} });
    expect([200, 202]).toContain(job.status);
    if (job.status === 202) {
      const jobId = (job.body as { job: { id: string } }).job.id;
      await check(admin, 'getJob', { params: { id: jobId } });
      await check(admin, 'cancelJob', { params: { id: jobId } });
      await check(admin, 'jobEvents', { params: { id: jobId } });
    }

    // The typed client's own helpers: an action's result, and an error answer thrown with its code.
    const notebooks = await admin.action('notebook_list', {}) as { notebooks: { name: string }[] };
    expect(notebooks.notebooks.map((entry) => entry.name).sort()).toEqual(['Home', 'Work']);
    const refused = await admin.call('getJob', { params: { id: 'none' } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QuireApiError);
    expect((refused as QuireApiError).code).toBe('JOB_NOT_FOUND');

    const notChecked = ROUTE_DOCS.map((route) => route.operationId).filter((operationId) => !seen.has(operationId) && !['apiReference', 'apiReferenceAsset', 'mcpPost', 'mcpGet', 'mcpDelete'].includes(operationId));
    expect(notChecked).toEqual([]);
    void kernel;
  });

  it('/api/docs is Swagger UI served with its files from the kernel and a CSP that allows only them and its one inline script', async () => {
    const { url } = await serve();
    const page = await fetch(`${url}/api/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self' 'sha256-");
    expect(csp).not.toContain('unsafe-eval');
    expect(html).not.toMatch(/https?:\/\//);
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`);
    expect(inline.length).toBe(1);
    expect(csp).toContain(inline[0]);
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)) {
      const asset = await fetch(`${url}${src}`);
      expect(asset.status, src).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    expect((await fetch(`${url}/api/docs/assets/swagger-ui-dist/package.json`)).status).toBe(404);
    expect((await fetch(`${url}/api/docs/assets/swagger-ui-dist/..%2f..%2fpackage.json`)).status).toBe(404);
    // Names an object literal holds of its own (a 500 and an error line before).
    for (const name of ['constructor', '__proto__', 'toString']) expect((await fetch(`${url}/api/docs/assets/swagger-ui-dist/${name}`)).status).toBe(404);
    // Only the description is open: the rest of /api still needs the token.
    expect((await fetch(`${url}/api/docs/../grants`)).status).toBe(401);
  });
});
