import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { Kernel, type KernelOptions } from '../../core/kernel.js';
import type { KernelConfigFile } from '../../core/config/kernel-config.js';
import { silentLogger } from '../../core/log.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE_CODE_ROOT = join(REPO_ROOT, 'test', 'fixtures', 'native');
const FIXTURE_MANIFESTS = join(FIXTURE_CODE_ROOT, 'manifests');

export interface UserPlugin {
  manifest: Record<string, unknown>;
  /** The entry module's source (plain JavaScript). */
  code: string;
  entry?: string;
}

export interface BootOptions {
  /** Fixture native plugins to load (ids under test/fixtures/native/manifests). */
  plugins?: string[];
  /** Load the real native manifests instead of fixtures. */
  realManifests?: boolean;
  config?: KernelConfigFile;
  /** User plugins to write under <workspace>/plugins before boot. */
  userPlugins?: Record<string, UserPlugin>;
  workspace?: string;
}

/**
 * A fresh kernel per test over a temporary workspace (real files, real folders), closed and removed
 * after each test.
 */
export function useHarness() {
  const folders: string[] = [];
  const kernels: Kernel[] = [];
  afterEach(async () => {
    for (const kernel of kernels.splice(0)) await kernel.close();
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });

  async function tempDir(prefix = 'quire-test-'): Promise<string> {
    const folder = await mkdtemp(join(tmpdir(), prefix));
    folders.push(folder);
    return folder;
  }

  async function kernelOptions(options: BootOptions = {}): Promise<KernelOptions> {
    const workspace = options.workspace ?? join(await tempDir(), 'workspace');
    for (const [id, plugin] of Object.entries(options.userPlugins ?? {})) await writeUserPlugin(workspace, id, plugin);
    const config = withTestActivationLimit(options.config ?? {});
    if (options.realManifests) {
      return { workspace, config, logger: silentLogger };
    }
    const manifests = await tempDir('quire-manifests-');
    for (const id of options.plugins ?? []) await copyFile(join(FIXTURE_MANIFESTS, `${id}.json`), join(manifests, `${id}.json`));
    return { workspace, config, nativeManifestsDir: manifests, codeRoot: FIXTURE_CODE_ROOT, logger: silentLogger };
  }

  async function boot(options: BootOptions = {}): Promise<Kernel> {
    const kernel = await Kernel.boot(await kernelOptions(options));
    kernels.push(kernel);
    return kernel;
  }

  return { tempDir, kernelOptions, boot };
}

/**
 * The activation limit counts loading a plugin's module. Under vitest the first boot in a worker
 * transforms each plugin's module graph first: the blocks plugin's took 0.7 s on an idle machine, 1.4 s
 * beside the kill test, and over 10 s once in CI, failing a test of something else. Tests of the limit
 * set their own; the others get one that only a hang reaches.
 */
const TEST_ACTIVATION_TIMEOUT_MS = 120_000;

export function withTestActivationLimit(config: KernelConfigFile): KernelConfigFile {
  return { ...config, pluginHost: { activationTimeoutMs: TEST_ACTIVATION_TIMEOUT_MS, ...config.pluginHost } };
}

export async function writeUserPlugin(workspace: string, id: string, plugin: UserPlugin): Promise<void> {
  const folder = join(workspace, 'plugins', id);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'manifest.json'), JSON.stringify(plugin.manifest, null, 2));
  await writeFile(join(folder, plugin.entry ?? 'index.js'), plugin.code);
}

/** Catches a rejection and returns the error, failing the test if there was none. */
export async function caught(promise: Promise<unknown> | (() => unknown)): Promise<{ code?: string; message: string; details?: Record<string, unknown> }> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected an error, but the call succeeded');
}
