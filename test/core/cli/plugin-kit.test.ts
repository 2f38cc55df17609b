import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { startTestKernel } from '../../../core/testing.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

/** Issue 18, point 9: a plugin written in TypeScript against `quire/plugin`, from scaffold to a running kernel. */
const run = promisify(execFile);
const TSC = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');

async function cli(args: string[]) {
  const io = bufferIO();
  const code = await runCli(args, io);
  return { code, out: io.outText(), err: io.errText() };
}

describe('the plugin kit', () => {
  const harness = useHarness();

  it('scaffolds a manifest that validates for the longest id a plugin may have', async () => {
    const base = await harness.tempDir('quire-plugin-kit-');
    const id = `a-very-long-plugin-identifier-${'x'.repeat(34)}`;
    expect(id).toHaveLength(64);
    expect((await cli(['plugin', 'new', id, '--dir', base])).code).toBe(0);
    // The entry as its build would leave it: only the manifest is judged here.
    await mkdir(join(base, id, 'dist'), { recursive: true });
    await writeFile(join(base, id, 'dist', 'index.js'), 'export default { activate() { return {}; } };\n');
    const validated = await cli(['plugin', 'validate', join(base, id)]);
    expect([validated.code, validated.err]).toEqual([0, '']);
  });

  it('scaffolds a TypeScript plugin that type-checks against quire/plugin, validates, installs and runs in a kernel; a wrong use is a type error', async () => {
    const base = await harness.tempDir('quire-plugin-kit-');
    // As after `npm install quire` in the plugin's folder.
    await mkdir(join(base, 'node_modules'), { recursive: true });
    await symlink(REPO_ROOT, join(base, 'node_modules', 'quire'), 'dir');
    expect((await cli(['plugin', 'new', 'greeter', '--dir', base])).code).toBe(0);
    expect((await cli(['plugin', 'new', 'Bad Id', '--dir', base])).code).toBe(2);
    const folder = join(base, 'greeter');
    // The kernel is linked by its folder: `quire` on npm is another package.
    expect(JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')).devDependencies.quire).toBe(`file:${REPO_ROOT}`);
    // Its own build tools, as `npm install` leaves them: not copied by install (no runtime dependencies).
    await mkdir(join(folder, 'node_modules', '.bin'), { recursive: true });
    await symlink(REPO_ROOT, join(folder, 'node_modules', 'quire'), 'dir');
    await run(TSC, ['-p', join(folder, 'tsconfig.json')], { cwd: folder });
    expect((await cli(['plugin', 'validate', folder])).code).toBe(0);
    // The scaffold's own test: the built plugin in a real kernel, through quire/testing.
    const own = await run(process.execPath, ['--test', 'test/'], { cwd: folder });
    expect(own.stdout).toMatch(/# pass 1/);
    // From a folder named otherwise (a clone named after its repository), its own test still finds it; a
    // plugin the kernel refuses says why at the start, not as a missing action at the first call.
    const clone = join(base, 'quire-plugin-greeter');
    await cp(folder, clone, { recursive: true, verbatimSymlinks: true });
    expect((await run(process.execPath, ['--test', 'test/'], { cwd: clone })).stdout).toMatch(/# pass 1/);
    const manifest = JSON.parse(await readFile(join(clone, 'manifest.json'), 'utf8')) as { tools: { actions: Record<string, unknown> }[] };
    manifest.tools[0]!.actions.missing = { ...manifest.tools[0]!.actions.hello as object };
    await writeFile(join(clone, 'manifest.json'), JSON.stringify(manifest));
    await expect(startTestKernel({ plugin: clone })).rejects.toThrow(/refused plugin 'greeter': PLUGIN_ACTION_MISMATCH/);
    const root = join(base, 'workspace');
    await mkdir(root);
    expect((await cli(['plugin', 'install', folder, '--workspace', root])).code).toBe(0);
    expect((await readdir(join(root, 'plugins', 'greeter'))).sort()).toEqual(['README.md', 'dist', 'manifest.json', 'package.json', 'src', 'test', 'tsconfig.json']);
    const kernel = await harness.boot({ realManifests: true, workspace: root, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const outcome = await kernel.pipeline.call({ target: 'greeter_hello', input: { name: 'Ada' }, principal: { kind: 'person', name: 'alice', role: 'admin' } });
    expect(outcome).toMatchObject({ status: 'ok', value: { greeting: 'Hello, Ada!' } });

    // The types catch a plugin that misuses the context.
    const source = join(folder, 'src', 'index.ts');
    await writeFile(source, (await readFile(source, 'utf8')).replace("ctx.log.info('greeter activated');", "ctx.log.info('greeter activated'); ctx.provideBackend('embedder', 42);"));
    const failed = await run(TSC, ['-p', join(folder, 'tsconfig.json')], { cwd: folder }).then(() => '', (error: { stdout?: string }) => error.stdout ?? 'failed');
    expect(failed).toMatch(/src\/index\.ts.*error/);
  }, 120_000);
});
