import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kernel } from './kernel.js';
import { recordId } from './plugins/catalog-checks.js';
import { isPluginId } from './manifest/wire-name.js';
import { silentLogger } from './log.js';
import type { Principal } from './plugin-api.js';

/** A kernel over a fresh temporary workspace holding the plugin under test (`quire/testing`). */
export interface TestKernel {
  readonly kernel: Kernel;
  /** Calls an action by wire name as an administrator (a person): its value, or the kernel's error thrown. */
  call<T = Record<string, unknown>>(wireName: string, input?: Record<string, unknown>): Promise<T>;
  /** Closes the kernel and removes the workspace. */
  close(): Promise<void>;
}

const PERSON: Principal = { kind: 'person', name: 'test', role: 'admin' };

/**
 * For a plugin's own tests: copies the plugin folder (its manifest.json and built entry) into a new
 * workspace and boots a real kernel with the native plugins beside it. `trusted` runs it in the
 * kernel's process; otherwise it runs as an installed plugin would, out of process. It is installed
 * under its manifest's id (a clone named `quire-plugin-x` holds plugin `x`); a plugin the kernel refuses
 * throws its problems here, not a bare "no action" at the first call.
 */
export async function startTestKernel(options: { plugin: string; trusted?: boolean; config?: Record<string, unknown> }): Promise<TestKernel> {
  const root = join(await mkdtemp(join(tmpdir(), 'quire-plugin-test-')), 'workspace');
  const folder = resolve(options.plugin);
  const declared = await readFile(join(folder, 'manifest.json'), 'utf8').then((text) => (JSON.parse(text) as { id?: unknown }).id, () => undefined);
  if (typeof declared !== 'string' || !isPluginId(declared)) {
    throw new Error(`${join(folder, 'manifest.json')}: its id ${JSON.stringify(declared)} is not a plugin id (kebab-case; quire plugin validate says more)`);
  }
  const id = declared;
  await cp(folder, join(root, 'plugins', id), { recursive: true, filter: (path) => !path.includes(`${folder}/node_modules`) });
  const kernel = await Kernel.boot({
    workspace: root, logger: silentLogger,
    config: { plugins: { blocks: { config: { watch: false, welcome: false } }, [id]: { trusted: options.trusted === true, ...(options.config ? { config: options.config } : {}) } } },
  });
  const record = kernel.plugins.getCatalog()?.all.find((candidate) => candidate.source === 'user' && recordId(candidate) === id);
  const problems = record ? kernel.plugins.problemsOf(record) : undefined;
  if (problems && problems.length > 0) {
    await kernel.close();
    await rm(join(root, '..'), { recursive: true, force: true });
    throw new Error(`the kernel refused plugin '${id}': ${problems.map((problem) => `${problem.code}: ${problem.message}`).join('; ')}`);
  }
  return {
    kernel,
    async call<T>(wireName: string, input: Record<string, unknown> = {}): Promise<T> {
      const outcome = await kernel.pipeline.call({ target: wireName, input, principal: PERSON });
      return (outcome.status === 'ok' ? outcome.value : outcome) as T;
    },
    async close() {
      await kernel.close();
      await rm(join(root, '..'), { recursive: true, force: true });
    },
  };
}
