import { createHash } from 'node:crypto';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { Kernel } from '../../../core/kernel.js';
import { createLogger } from '../../../core/log.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { useHarness, writeUserPlugin, type UserPlugin } from '../../helpers/harness.js';
import { fixtureEvents } from '../../fixtures/native/plugins/fixture-events.js';

const ADMIN = 'qk_refused-plugins-admin';
const auth: KernelConfigFile['auth'] = { tokens: [{ name: 'alice', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] };
const base = { version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
const empty = 'export default { activate() { return {}; } };';
const greetTool = { name: 'greet', description: 'x', actions: { hello: { description: 'x', input: { type: 'object' }, effects: [] } } };

/** One healthy user plugin beside every way a user plugin can go wrong, and plugins that depend on the broken ones. */
const PLUGINS: Record<string, UserPlugin> = {
  good: { manifest: { ...base, id: 'good', tools: [greetTool] }, code: 'export default { activate() { return { greet: { hello: () => ({ hi: true }) } }; } };' },
  'bad-manifest': { manifest: { id: 'bad-manifest', provides: ['bad.cap'], tools: 'none' }, code: empty },
  'needs-bad': { manifest: { ...base, id: 'needs-bad', requires: ['bad.cap'] }, code: empty },
  throws: { manifest: { ...base, id: 'throws', provides: ['throws.cap'] }, code: 'export default { activate() { throw new Error("boom in activate"); } };' },
  'needs-throws': { manifest: { ...base, id: 'needs-throws', requires: ['throws.cap'] }, code: 'export default { activate(ctx) { ctx.get("throws.cap"); return {}; } };' },
  rejects: { manifest: { ...base, id: 'rejects' }, code: 'export default { async activate() { await null; throw new Error("late boom"); } };' },
  'no-entry': { manifest: { ...base, id: 'no-entry', entry: 'main.js' }, code: empty },
  'load-fails': { manifest: { ...base, id: 'load-fails' }, code: 'throw new Error("boom at import");' },
};

interface Listed { id: string; source: string; state: string; active: boolean; problems?: { code: string; message: string; pointer?: string }[] }

describe('a bad user plugin never stops the kernel', () => {
  const harness = useHarness();
  const servers: RunningServer[] = [];
  beforeEach(() => { fixtureEvents().length = 0; });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function listing(kernel: Kernel): Promise<Map<string, Listed>> {
    return new Map((await listed(kernel)).map((plugin) => [plugin.id, plugin]));
  }

  async function listed(kernel: Kernel): Promise<Listed[]> {
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const response = await fetch(`${server.url}/api/plugins`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(response.status).toBe(200);
    return (await response.json() as { plugins: Listed[] }).plugins;
  }

  it('starts with the rest, and lists each refused plugin with its problems in GET /api/plugins', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth }, userPlugins: PLUGINS });
    const plugins = await listing(kernel);
    const codes = (id: string) => plugins.get(id)?.problems?.map((problem) => problem.code);
    expect([plugins.get('notes')?.state, plugins.get('good')?.state]).toEqual(['active', 'active']);
    for (const id of ['bad-manifest', 'needs-bad', 'throws', 'needs-throws', 'rejects', 'no-entry', 'load-fails']) {
      expect([id, plugins.get(id)?.state, plugins.get(id)?.active]).toEqual([id, 'refused', false]);
    }
    expect(codes('bad-manifest')).toContain('MANIFEST_FIELD_MISSING');
    expect(plugins.get('bad-manifest')!.problems!.map((problem) => problem.pointer)).toEqual(expect.arrayContaining(['/version', '/entry']));
    expect(codes('throws')).toEqual(['PLUGIN_ACTIVATION_FAILED']);
    expect(codes('rejects')).toEqual(['PLUGIN_ACTIVATION_FAILED']);
    expect(codes('load-fails')).toEqual(['PLUGIN_LOAD_FAILED']);
    expect(plugins.get('no-entry')!.problems).toEqual([expect.objectContaining({ code: 'MANIFEST_ENTRY_MISSING', pointer: '/entry' })]);
    // A plugin that requires what a refused plugin provides is refused too, naming that plugin.
    expect(codes('needs-bad')).toEqual(['PLUGIN_DEPENDENCY_REFUSED']);
    expect(plugins.get('needs-bad')!.problems![0]!.message).toContain('bad-manifest');
    expect(codes('needs-throws')).toEqual(['PLUGIN_DEPENDENCY_REFUSED']);
    expect(plugins.get('needs-throws')!.problems![0]!.message).toContain('throws');
    // The kernel serves the healthy plugins' actions.
    const call = await fetch(`${servers[0]!.url}/api/actions/good/greet/hello`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{}' });
    expect([call.status, await call.json()]).toEqual([200, { result: { hi: true } }]);
    expect(kernel.registry.get('note_get')).toBeDefined();
  });

  it('refuses a plugin whose folder cannot be read (a dangling link) and starts with the rest', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    await mkdir(join(workspace, 'plugins'), { recursive: true });
    await symlink(join(workspace, 'nowhere'), join(workspace, 'plugins', 'dangling'));
    const kernel = await harness.boot({ workspace, config: { auth }, userPlugins: { good: PLUGINS.good! } });
    const plugins = await listing(kernel);
    expect(plugins.get('good')?.state).toBe('active');
    expect(plugins.get('dangling')).toMatchObject({ state: 'refused', problems: [expect.objectContaining({ code: 'MANIFEST_INVALID', message: expect.stringContaining("cannot read the plugin's folder") })] });
  });

  it('writes each refusal to the log as a warning naming the plugin and its problem codes', async () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: { write: (line) => { lines.push(line); } } });
    const options = await harness.kernelOptions({ plugins: ['notes'], userPlugins: { throws: PLUGINS.throws!, 'needs-throws': PLUGINS['needs-throws']! } });
    const kernel = await Kernel.boot({ ...options, logger });
    try {
      const refused = lines.map((line) => JSON.parse(line) as { level: string; message: string; plugin?: string; problems?: { code: string }[] }).filter((record) => record.message === 'plugin refused');
      expect(refused.map((record) => [record.level, record.plugin, record.problems?.map((problem) => problem.code)])).toEqual([
        ['warn', 'throws', ['PLUGIN_ACTIVATION_FAILED']],
        ['warn', 'needs-throws', ['PLUGIN_DEPENDENCY_REFUSED']],
      ]);
    } finally {
      await kernel.close();
    }
  });

  it('refuses a user plugin whose id is one of those external MCP servers are known by (mcp-<name>)', async () => {
    const kernel = await harness.boot({
      plugins: ['notes'], config: { auth },
      userPlugins: { 'mcp-github': { manifest: { ...base, id: 'mcp-github' }, code: empty } },
    });
    const plugins = await listed(kernel);
    expect(plugins.filter((plugin) => plugin.id === 'mcp-github').map((plugin) => [plugin.source, plugin.state, plugin.problems?.map((problem) => problem.code)])).toEqual([['user', 'refused', ['PLUGIN_RESERVED_ID']]]);
  });

  it('refuses a user plugin that shadows a native id or takes a native wire name, and keeps the native one', async () => {
    const clash = { ...base, id: 'clash', tools: [{ name: 'note', description: 'x', actions: { get: { description: 'x', input: { type: 'object' }, effects: [] } } }] };
    const kernel = await harness.boot({
      plugins: ['notes'], config: { auth },
      userPlugins: { notes: { manifest: { ...base, id: 'notes' }, code: empty }, clash: { manifest: clash, code: 'export default { activate() { return { note: { get: () => ({}) } }; } };' } },
    });
    expect(kernel.registry.get('note_get')!.pluginId).toBe('notes');
    const plugins = await listed(kernel);
    expect(plugins.filter((plugin) => plugin.id === 'notes').map((plugin) => [plugin.source, plugin.state, plugin.problems?.map((problem) => problem.code)])).toEqual([['native', 'active', undefined], ['user', 'refused', ['PLUGIN_DUPLICATE_ID']]]);
    expect(plugins.find((plugin) => plugin.id === 'clash')?.problems?.map((problem) => problem.code)).toEqual(['WIRE_NAME_COLLISION']);
    // Found from the manifests alone: the clashing plugin's code never ran.
    expect(fixtureEvents()).toEqual(['activate:notes']);
  });

  it('a broken copy of a plugin (a folder named otherwise, sorting first) is refused for what is wrong with it, and the plugin itself runs', async () => {
    const kernel = await harness.boot({
      plugins: ['notes'], config: { auth },
      userPlugins: { 'aaa-dupe': { manifest: { ...base, id: 'dupe' }, code: empty }, dupe: { manifest: { ...base, id: 'dupe' }, code: empty } },
    });
    const plugins = await listed(kernel);
    expect(plugins.filter((plugin) => plugin.id === 'dupe').map((plugin) => [plugin.state, plugin.active, plugin.problems?.map((problem) => problem.code)]).sort()).toEqual([['active', true, undefined], ['refused', false, ['MANIFEST_ID_MISMATCH']]]);
    // By its id, the plugin is the valid one: it can be switched off.
    await kernel.plugins.setEnabled('dupe', false);
    expect(kernel.plugins.isActive('dupe')).toBe(false);
  });

  it('refuses a user plugin whose config in quire.json does not fit its schema, with the pointer', async () => {
    const configurable = { ...base, id: 'configurable', config: { type: 'object', properties: { size: { type: 'integer' } }, additionalProperties: false } };
    const kernel = await harness.boot({ plugins: ['notes'], config: { auth, plugins: { configurable: { config: { size: 'big' } } } }, userPlugins: { configurable: { manifest: configurable, code: empty } } });
    const problems = (await listing(kernel)).get('configurable')?.problems;
    expect(problems).toEqual([expect.objectContaining({ code: 'PLUGIN_CONFIG_INVALID', pointer: '/plugins/configurable/config/size' })]);
  });

  it('refuses every user plugin of a requirement cycle, and a plugin needing something nobody provides', async () => {
    const kernel = await harness.boot({
      plugins: ['notes'], config: { auth },
      userPlugins: {
        'loop-a': { manifest: { ...base, id: 'loop-a', requires: ['loop.b'], provides: ['loop.a'] }, code: empty },
        'loop-b': { manifest: { ...base, id: 'loop-b', requires: ['loop.a'], provides: ['loop.b'] }, code: empty },
        grabby: { manifest: { ...base, id: 'grabby', requires: ['core.grants'] }, code: empty },
      },
    });
    const plugins = await listing(kernel);
    expect(['loop-a', 'loop-b', 'grabby'].map((id) => plugins.get(id)?.problems?.map((problem) => problem.code))).toEqual([['PLUGIN_DEPENDENCY_CYCLE'], ['PLUGIN_DEPENDENCY_CYCLE'], ['PLUGIN_DEPENDENCY_MISSING']]);
    expect(plugins.get('notes')?.state).toBe('active');
  });

  it('still stops the start when a native plugin fails', async () => {
    await expect(harness.boot({ plugins: ['mismatch'], userPlugins: { good: PLUGINS.good! } })).rejects.toMatchObject({ code: 'PLUGIN_ACTION_MISMATCH' });
  });

  it('quire plugin validate lists each plugin with its problems, and a plugin whose requirement comes from a refused plugin', async () => {
    const workspace = join(await harness.tempDir(), 'workspace');
    for (const id of ['good', 'bad-manifest', 'needs-bad', 'no-entry'] as const) await writeUserPlugin(workspace, id, PLUGINS[id]!);
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', join(workspace, 'plugins')], io)).toBe(1);
    expect(io.errText()).toMatch(/bad-manifest[\\/]manifest\.json#\/version: MANIFEST_FIELD_MISSING/);
    expect(io.errText()).toMatch(/no-entry[\\/]manifest\.json#\/entry: MANIFEST_ENTRY_MISSING/);
    expect(io.errText()).toMatch(/needs-bad[\\/]manifest\.json: PLUGIN_DEPENDENCY_REFUSED .*'bad\.cap'.*'bad-manifest'/);
    expect(io.outText()).toMatch(/ok {2}.*good[\\/]manifest\.json/);
  });
});
