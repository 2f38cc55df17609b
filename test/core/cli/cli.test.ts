import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

describe('quire command line', () => {
  it.each([['serve'], ['plugin', 'validate'], ['audit', 'verify']])('prints help for "%s" and exits 0', async (...command) => {
    const io = bufferIO();
    expect(await runCli([...command, '--help'], io)).toBe(0);
    expect(io.outText()).toContain(`Usage: quire ${command.join(' ')}`);
  });

  it('lists the commands on --help and exits 2 when given none', async () => {
    const help = bufferIO();
    expect(await runCli(['--help'], help)).toBe(0);
    expect(help.outText()).toContain('plugin validate');
    expect(await runCli([], bufferIO())).toBe(2);
  });

  it('exits 2 naming an unknown command or option', async () => {
    const unknown = bufferIO();
    expect(await runCli(['explode'], unknown)).toBe(2);
    expect(unknown.errText()).toContain("unknown command 'explode'");
    const partial = bufferIO();
    expect(await runCli(['plugin'], partial)).toBe(2);
    expect(partial.errText()).toContain('plugin validate');
    const option = bufferIO();
    expect(await runCli(['audit', 'verify', '--colour'], option)).toBe(2);
    expect(option.errText()).toContain('--colour');
    const port = bufferIO();
    expect(await runCli(['serve', '--port', 'eighty'], port)).toBe(2);
    expect(port.errText()).toContain('--port');
  });

  it('validates the native manifests and exits 0', async () => {
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', `${REPO_ROOT}/manifests`], io)).toBe(0);
    expect(io.outText()).toMatch(/0 problem\(s\)/);
  });

  it('reports a path that does not exist', async () => {
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', '/no/such/manifest.json'], io)).toBe(1);
    expect(io.errText()).toContain('/no/such/manifest.json: no such file');
  });

  it('exits 1 when auditing a workspace that does not exist or a folder of other files, as the commands that open one do, writing nothing', async () => {
    const notes = await mkdtemp(join(tmpdir(), 'quire-not-a-workspace-'));
    try {
      await writeFile(join(notes, 'Compost.md'), '# Compost\n');
      for (const verb of ['verify', 'anchor']) {
        const missing = bufferIO();
        expect(await runCli(['audit', verb, '--workspace', '/no/such/workspace'], missing)).toBe(1);
        expect(missing.errText()).toContain(`quire audit ${verb}: there is no workspace at /no/such/workspace`);
        // A mistyped path to a folder of notes: "audit log intact: 0 line(s)", exit 0, and anchor made audit/ in it.
        const other = bufferIO();
        expect(await runCli(['audit', verb, '--workspace', notes], other)).toBe(1);
        expect(other.errText()).toContain('is a folder of other files, not a Quire workspace');
      }
      expect(await readdir(notes)).toEqual(['Compost.md']);
    } finally {
      await rm(notes, { recursive: true, force: true });
    }
  });
});

describe('a command that fails where it did not expect to', () => {
  const harness = useHarness();

  it('says why in a line and exits 1, with no stack trace (a damaged audit head)', async () => {
    const root = join(await harness.tempDir(), 'ws');
    await mkdir(join(root, 'audit'), { recursive: true });
    await writeFile(join(root, 'audit', 'audit.head.json'), 'x');
    const io = bufferIO();
    expect(await runCli(['audit', 'verify', '--workspace', root], io)).toBe(1);
    expect(io.errText()).toMatch(/^quire audit verify: .+/);
    expect(io.errText()).not.toMatch(/\n\s+at /);
  });
});

describe('quire plugin validate across manifests', () => {
  const harness = useHarness();

  async function userPlugin(folder: string, manifest: Record<string, unknown>): Promise<string> {
    const dir = join(await harness.tempDir(), folder);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await writeFile(join(dir, 'index.js'), 'export default { activate() { return {}; } };');
    return dir;
  }

  const base = { version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };

  it('reports a requirement nothing provides, and a wire name a native plugin already uses', async () => {
    const needy = await userPlugin('needy', { ...base, id: 'needy', requires: ['blocks.nothing'] });
    const clash = await userPlugin('clash', { ...base, id: 'clash', tools: [{ name: 'system', description: 'x', actions: { info: { description: 'x', input: { type: 'object' }, effects: [] } } }] });
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', needy, clash], io)).toBe(1);
    expect(io.errText()).toContain("PLUGIN_DEPENDENCY_MISSING plugin 'needy' requires 'blocks.nothing'");
    expect(io.errText()).toMatch(/WIRE_NAME_COLLISION plugins '(clash|system)' and '(clash|system)' both define the action 'system_info'/);
  });

  it('reports a user plugin that takes a native plugin\'s id', async () => {
    const shadow = await userPlugin('system', { ...base, id: 'system' });
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', shadow], io)).toBe(1);
    expect(io.errText()).toContain('PLUGIN_DUPLICATE_ID');
  });
});
