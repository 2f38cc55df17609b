import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The no-op read action every pipeline figure is measured with. */
export const NOOP_RESULT = { ok: true };

/**
 * A temporary workspace holding one user plugin, `bench`, with a no-op read action `bench_noop`.
 * It is marked trusted so that, declaring no effects, it is a plain read.
 */
export async function createBenchWorkspace(): Promise<{ root: string; config: Record<string, unknown> }> {
  const root = await mkdtemp(join(tmpdir(), 'quire-bench-'));
  const folder = join(root, 'plugins', 'bench');
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'manifest.json'), JSON.stringify({
    id: 'bench', version: '1.0.0', kernel: '^0.1.0', description: 'benchmark plugin', entry: 'index.js',
    tools: [{ name: 'bench', description: 'benchmarks', actions: {
      noop: { description: 'does nothing and returns a constant', input: { type: 'object', properties: {}, additionalProperties: false }, effects: [] },
    } }],
  }));
  await writeFile(join(folder, 'index.js'), `export default { activate() { return { bench: { noop: () => (${JSON.stringify(NOOP_RESULT)}) } }; } };\n`);
  return { root, config: { plugins: { bench: { trusted: true } } } };
}
