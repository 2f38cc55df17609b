import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { useHarness, writeUserPlugin, type UserPlugin } from '../../helpers/harness.js';

/** Issue 18, point 9: installing and listing plugins from the terminal. */
const SENDER: UserPlugin = {
  manifest: {
    id: 'sender', version: '0.2.0', kernel: '^0.1.0', description: 'posts a text elsewhere', entry: 'index.js',
    tools: [{ name: 'post', description: 'Post a text', actions: {
      send: { description: 'Send a text to a server', input: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false }, effects: ['dataEgress'] },
      peek: { description: 'What would be sent', input: { type: 'object', properties: {}, additionalProperties: false }, effects: [] },
    } }],
  },
  code: 'export default { activate() { return { post: { send: async () => ({ sent: true }), peek: async () => ({ text: "" }) } }; } };',
};

const run2 = promisify(execFile);

async function run(args: string[]) {
  const io = bufferIO();
  const code = await runCli(args, io);
  return { code, out: io.outText(), err: io.errText() };
}

describe('quire plugin install and list', () => {
  const { tempDir } = useHarness();
  it('checks the folder, shows what it declares, installs it whole, refuses to overwrite, and lists it', async () => {
    const base = await tempDir('quire-plugin-cli-');
    const root = join(base, 'workspace');
    await mkdir(root);
    await writeUserPlugin(base, 'sender', SENDER);
    const folder = join(base, 'plugins', 'sender');
    // A mistyped workspace path is refused, and no folder is made there.
    const mistyped = await run(['plugin', 'install', folder, '--workspace', `${root}-typo`]);
    expect([mistyped.code, mistyped.err, existsSync(`${root}-typo`)]).toEqual([1, expect.stringContaining('there is no workspace at'), false]);
    const installed = await run(['plugin', 'install', folder, '--workspace', root]);
    expect(installed.code).toBe(0);
    expect(installed.out).toContain('sender 0.2.0: posts a text elsewhere');
    expect(installed.out).toContain('post_send: dataEgress');
    expect(installed.out).toContain('post_peek: no effects declared (counted as every effect while the plugin is untrusted)');
    expect(installed.out).toContain('It will run untrusted');
    expect((await readdir(join(root, 'plugins', 'sender'))).sort()).toEqual(['index.js', 'manifest.json']);
    expect(await readdir(join(root, 'plugins'))).toEqual(['sender']);
    const again = await run(['plugin', 'install', folder, '--workspace', root]);
    expect(again).toMatchObject({ code: 1, err: expect.stringContaining('exists; give --replace') });
    // Trust is quire.json's, by id: a new version installed under a trusted id is told it runs trusted.
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { sender: { trusted: true } } }));
    const replaced = await run(['plugin', 'install', folder, '--replace', '--workspace', root]);
    expect(replaced.code).toBe(0);
    expect(replaced.out).toContain("quire.json marks 'sender' trusted: this code will run in the kernel's own process");
    expect(replaced.out).not.toContain('It will run untrusted');
    await writeFile(join(root, 'quire.json'), '{}');
    const listed = await run(['plugin', 'list', '--workspace', root]);
    expect(listed.code).toBe(0);
    // Untrusted, its silence counts as every effect.
    expect(listed.out).toMatch(/^sender {2}active {2}user {2}2 actions \(dataEgress, localWrite, externalCost\)$/m);
    expect(listed.out).toMatch(/^blocks {2}active {2}native, trusted/m);
  }, 60_000);

  it('lists a plugin whose activate hangs as refused once quire.json\'s activation limit passes, as serve does', async () => {
    const root = join(await tempDir('quire-plugin-cli-'), 'workspace');
    await mkdir(root);
    await writeFile(join(root, 'quire.json'), JSON.stringify({ pluginHost: { activationTimeoutMs: 500 } }));
    await writeUserPlugin(root, 'hangs', { manifest: { ...SENDER.manifest, id: 'hangs' }, code: 'export default { activate() { return new Promise(() => {}); } };' });
    const listed = await run(['plugin', 'list', '--workspace', root]);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/^hangs {2}refused/m);
    expect(listed.out + listed.err).toContain('PLUGIN_ACTIVATION_TIMEOUT');
  }, 60_000);

  it('installs nothing from a folder whose manifest is wrong or that holds a link', async () => {
    const base = await tempDir('quire-plugin-cli-');
    const root = join(base, 'workspace');
    await mkdir(root);
    await writeUserPlugin(base, 'broken', { ...SENDER, manifest: { ...SENDER.manifest, id: 'broken', tools: [{ name: 'post', description: 'x', actions: { send: { description: 'x', input: { type: 'object' }, effects: ['teleport'] } } }] } });
    const refused = await run(['plugin', 'install', join(base, 'plugins', 'broken'), '--workspace', root]);
    expect(refused).toMatchObject({ code: 1, err: expect.stringContaining('nothing was installed') });
    expect(refused.err).toMatch(/effects.*teleport|MANIFEST_EFFECT_UNKNOWN/);
    await writeUserPlugin(base, 'linked', { ...SENDER, manifest: { ...SENDER.manifest, id: 'linked' } });
    await mkdir(join(base, 'elsewhere'), { recursive: true });
    await writeFile(join(base, 'elsewhere', 'secret.txt'), 'x');
    await symlink(join(base, 'elsewhere', 'secret.txt'), join(base, 'plugins', 'linked', 'data.txt'));
    const linked = await run(['plugin', 'install', join(base, 'plugins', 'linked'), '--workspace', root]);
    expect(linked).toMatchObject({ code: 1, err: expect.stringContaining('is a link') });
    expect(existsSync(join(root, 'plugins'))).toBe(false);
  });

  it('checks a plugin against the native and installed ones as a start would, and names a manifest that does not parse', async () => {
    const base = await tempDir('quire-plugin-cli-');
    const root = join(base, 'workspace');
    await mkdir(root);
    // An id a native plugin has, and one reserved for external MCP servers: a start refuses both.
    for (const id of ['blocks', 'mcp-notes']) {
      await writeUserPlugin(base, id, { ...SENDER, manifest: { ...SENDER.manifest, id } });
      const refused = await run(['plugin', 'install', join(base, 'plugins', id), '--workspace', root]);
      expect([id, refused.code, refused.err]).toEqual([id, 1, expect.stringMatching(/PLUGIN_(DUPLICATE|RESERVED)_ID[\s\S]*nothing was installed/)]);
    }
    // An action name another installed plugin has.
    await writeUserPlugin(base, 'sender', SENDER);
    expect((await run(['plugin', 'install', join(base, 'plugins', 'sender'), '--workspace', root])).code).toBe(0);
    await writeUserPlugin(base, 'twin', { ...SENDER, manifest: { ...SENDER.manifest, id: 'twin' } });
    const twin = await run(['plugin', 'install', join(base, 'plugins', 'twin'), '--workspace', root]);
    expect([twin.code, twin.err]).toEqual([1, expect.stringMatching(/post_send[\s\S]*nothing was installed/)]);
    // Replacing a plugin is not a clash with itself.
    expect((await run(['plugin', 'install', join(base, 'plugins', 'sender'), '--replace', '--workspace', root])).code).toBe(0);
    expect(await readdir(join(root, 'plugins'))).toEqual(['sender']);
    // Nor is a plugin quire.json disables a clash: a start would not load it.
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { sender: { enabled: false } } }));
    expect((await run(['plugin', 'install', join(base, 'plugins', 'twin'), '--workspace', root])).code).toBe(0);
    await rm(join(root, 'plugins', 'twin'), { recursive: true });
    await writeFile(join(root, 'quire.json'), '{}');
    await mkdir(join(base, 'plugins', 'unparsed'), { recursive: true });
    await writeFile(join(base, 'plugins', 'unparsed', 'manifest.json'), '{ id: "unparsed" }');
    const unparsed = await run(['plugin', 'install', join(base, 'plugins', 'unparsed'), '--workspace', root]);
    expect([unparsed.code, unparsed.err]).toEqual([1, expect.stringMatching(/unparsed\/manifest\.json#: MANIFEST_JSON_INVALID [\s\S]*nothing was installed/)]);
  });

  it('installs from a .tgz as npm pack makes it (one top folder), with the same checks', async () => {
    const base = await tempDir('quire-plugin-cli-');
    const root = join(base, 'workspace');
    await mkdir(root);
    await writeUserPlugin(join(base, 'pack'), 'package', { ...SENDER, manifest: { ...SENDER.manifest } });
    const archive = join(base, 'sender-0.2.0.tgz');
    await run2('tar', ['-czf', archive, '-C', join(base, 'pack', 'plugins'), 'package']);
    const installed = await run(['plugin', 'install', archive, '--workspace', root]);
    expect(installed.code, installed.err).toBe(0);
    expect((await readdir(join(root, 'plugins', 'sender'))).sort()).toEqual(['index.js', 'manifest.json']);
  });
});
