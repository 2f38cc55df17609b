import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findConfigProblems } from '../../../core/config/config-problems.js';
import { readKernelConfigFile, withDefaults, type KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { Kernel } from '../../../core/kernel.js';
import { createLogger } from '../../../core/log.js';
import { useHarness } from '../../helpers/harness.js';

const ADMIN = 'qk_config-problems-admin';
const READER = 'qk_config-problems-reader';
const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const admin = { name: 'alice', role: 'admin' as const, sha256: sha(ADMIN) };

interface Problem { code: string; file: string; pointer: string; message: string; didYouMean?: string }

describe('mistakes in quire.json and grants.json are reported at start', () => {
  const harness = useHarness();
  const kernels: Kernel[] = [];
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    for (const kernel of kernels.splice(0)) await kernel.close();
  });

  async function start(config: KernelConfigFile, options: { env?: NodeJS.ProcessEnv; grants?: unknown[]; lines?: string[] } = {}) {
    const base = await harness.kernelOptions({ plugins: ['notes'], config });
    if (options.grants) {
      await mkdir(join(base.workspace, 'agent'), { recursive: true });
      await writeFile(join(base.workspace, 'agent', 'grants.json'), JSON.stringify({ version: 1, grants: options.grants }));
    }
    const lines = options.lines;
    const kernel = await Kernel.boot({ ...base, env: options.env ?? {}, ...(lines ? { logger: createLogger({ sink: { write: (line) => { lines.push(line); } } }) } : {}) });
    kernels.push(kernel);
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const api = async (method: string, path: string, body?: unknown, token = ADMIN) => {
      const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, body: await response.json() as Record<string, unknown> };
    };
    return { kernel, api };
  }

  const grant = (id: string, fields: Record<string, string>) => ({ id, plugin: 'notes', tool: 'note', action: 'put', effects: ['localWrite'], createdAt: '2026-01-01T00:00:00.000Z', createdBy: 'person:alice', ...fields });

  it('lists each mistake with its JSON pointer and the closest known name in GET /api/plugins, for administrators', async () => {
    const config: KernelConfigFile = {
      auth: { tokens: [admin, { name: 'dash', role: 'reader', env: 'QUIRE_READER_TOKN' }, { name: 'ops', role: 'reader', env: 'QUIRE_NOTHING_LIKE_IT' }, { name: 'rita', role: 'reader', sha256: sha(READER) }] },
      plugins: { notse: { enabled: true }, notes: {} },
      gate: { deny: [{ tool: 'nte' }, { tool: 'note', action: 'delet' }, { plugin: 'nots', tool: 'note' }, { tool: '*', action: 'delete' }, { tool: 'note', action: 'put' }] },
    };
    const grants = [grant('g1', { tool: 'noet' }), grant('g2', { plugin: 'ntoes' }), grant('g3', { action: 'gett' }), grant('g4', {})];
    const { api } = await start(config, { env: { QUIRE_READER_TOKEN: 'set' }, grants });
    const { status, body } = await api('GET', '/api/plugins');
    expect(status).toBe(200);
    const problems = (body.configProblems as Problem[]).map(({ code, file, pointer, didYouMean }) => [code, file, pointer, didYouMean]);
    expect(problems).toEqual([
      ['CONFIG_ENV_UNSET', 'quire.json', '/auth/tokens/1/env', 'QUIRE_READER_TOKEN'],
      ['CONFIG_ENV_UNSET', 'quire.json', '/auth/tokens/2/env', undefined],
      ['CONFIG_UNKNOWN_PLUGIN', 'quire.json', '/plugins/notse', 'notes'],
      ['CONFIG_UNKNOWN_TOOL', 'quire.json', '/gate/deny/0/tool', 'note'],
      ['CONFIG_UNKNOWN_ACTION', 'quire.json', '/gate/deny/1/action', 'delete'],
      ['CONFIG_UNKNOWN_PLUGIN', 'quire.json', '/gate/deny/2/plugin', 'notes'],
      ['CONFIG_UNKNOWN_TOOL', 'agent/grants.json', '/grants/0/tool', 'note'],
      ['CONFIG_UNKNOWN_PLUGIN', 'agent/grants.json', '/grants/1/plugin', 'notes'],
      ['CONFIG_UNKNOWN_ACTION', 'agent/grants.json', '/grants/2/action', 'get'],
    ]);
    // A reader sees the plugins, not the configuration's problems.
    const asReader = await api('GET', '/api/plugins', undefined, READER);
    expect([asReader.status, asReader.body.configProblems]).toEqual([200, undefined]);
  });

  it("says that an external MCP server's entry under plugins changes nothing, and where it is configured", () => {
    const config = withDefaults({ mcp: { servers: { echo: { command: 'node', args: ['echo.js'] } } }, plugins: { 'mcp-echo': { enabled: false }, 'mcp-other': {} } });
    const problems = findConfigProblems({ config, records: [], grants: [], env: {} }).map(({ code, pointer, message }) => [code, pointer, message]);
    expect(problems).toEqual([
      ['CONFIG_UNKNOWN_PLUGIN', '/plugins/mcp-echo', expect.stringContaining('configured under mcp.servers.echo (enabled, trusted there)')],
      ['CONFIG_UNKNOWN_PLUGIN', '/plugins/mcp-other', "no plugin has the id 'mcp-other'"],
    ]);
  });

  it('writes each mistake to the log as a warning at start', async () => {
    const lines: string[] = [];
    await start({ auth: { tokens: [admin] }, gate: { deny: [{ tool: 'nte' }] }, plugins: { notse: {} } }, { lines });
    const warnings = lines.map((line) => JSON.parse(line) as { level: string; message: string; code?: string; pointer?: string; didYouMean?: string })
      .filter((record) => record.message.startsWith('configuration problem'));
    expect(warnings.map((record) => [record.level, record.code, record.pointer, record.didYouMean])).toEqual([
      ['warn', 'CONFIG_UNKNOWN_PLUGIN', '/plugins/notse', 'notes'],
      ['warn', 'CONFIG_UNKNOWN_TOOL', '/gate/deny/0/tool', 'note'],
    ]);
  });

  it('says where quire.json is not valid JSON without quoting it (a secret pasted unquoted stays out of the message)', async () => {
    const folder = await harness.tempDir();
    const file = join(folder, 'quire.json');
    await writeFile(file, '{\n  "mcp": { "servers": { "x": { "url": "https://h/mcp", "headers": { "Authorization": Bearer sk-live-0123456789abcdef } } } }\n}\n');
    const error = await readKernelConfigFile(file).then(() => undefined, (caught: unknown) => caught as Error);
    expect(error?.message).toContain('not valid JSON');
    expect(error?.message).not.toContain('sk-live');
    await writeFile(file, '{\n  "a": 1\n  "b": 2\n}\n');
    expect((await readKernelConfigFile(file).then(() => undefined, (caught: unknown) => caught as Error))?.message).toMatch(/at line 3, column 3/);
  });

  it('reports nothing for a configuration whose names all exist', async () => {
    const { api } = await start({ auth: { tokens: [admin, { name: 'dash', role: 'reader', env: 'QUIRE_READER_TOKEN' }] }, plugins: { notes: {} }, gate: { deny: [{ plugin: 'notes', tool: 'note', action: 'delete' }, { tool: '*' }] } }, { env: { QUIRE_READER_TOKEN: READER }, grants: [grant('g1', {})] });
    expect((await api('GET', '/api/plugins')).body.configProblems).toEqual([]);
  });

  it('refuses to create a grant that has already expired (400), and creates one that has not', async () => {
    const { kernel, api } = await start({ auth: { tokens: [admin] } });
    const past = await api('POST', '/api/grants', { plugin: 'notes', tool: 'note', action: 'put', expiresAt: new Date(Date.now() - 60_000).toISOString() });
    expect([past.status, (past.body.error as { code: string }).code]).toEqual([400, 'INVALID_INPUT']);
    expect((past.body.error as { details: { issues: { pointer: string }[] } }).details.issues[0]!.pointer).toBe('/expiresAt');
    expect(kernel.grants.list()).toEqual([]);
    // A leap second passes the date-time format but no Date holds it: 400 naming the field, not 500.
    const leap = await api('POST', '/api/grants', { plugin: 'notes', tool: 'note', action: 'put', expiresAt: '2099-12-31T23:59:60Z' });
    expect([leap.status, (leap.body.error as { details: { field: string } }).details.field]).toEqual([400, 'expiresAt']);
    const future = await api('POST', '/api/grants', { plugin: 'notes', tool: 'note', action: 'put', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.status).toBe(201);
  });
});
