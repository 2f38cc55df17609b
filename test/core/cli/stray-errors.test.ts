import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeStray, strayOf } from '../../../core/cli/stray-errors.js';
import { CODE_ROOT } from '../../../core/paths.js';
import { recordId } from '../../../core/plugins/catalog-checks.js';
import { useHarness } from '../../helpers/harness.js';

/** An error whose stack runs through these files, first to last. */
function thrownAt(...files: string[]): Error {
  const error = new Error('forgot to catch this');
  error.stack = ['Error: forgot to catch this', '    at node:internal/timers:594:17', ...files.map((file, i) => `    at f${i} (${file}:1:1)`)].join('\n');
  return error;
}

describe('what quire serve says of an error no call caught', () => {
  const harness = useHarness();

  it('puts it down to a user plugin with how to run it untrusted, to Quire for its own plugins and kernel code first in the stack', async () => {
    const manifest = { id: 'careless', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [] };
    const kernel = await harness.boot({ realManifests: true, userPlugins: { careless: { manifest, code: 'export default { activate() { return {}; } };' } } });
    const folderOf = (id: string): string => {
      const record = kernel.plugins.getCatalog()!.all.find((candidate) => recordId(candidate) === id)!;
      return dirname(record.ok ? record.entryPath : record.file);
    };
    const user = strayOf(kernel, thrownAt(join(folderOf('careless'), 'index.js')));
    expect(user.plugin).toEqual({ id: 'careless', native: false });
    expect(describeStray(user)).toMatch(/plugin 'careless' threw outside any call .*run it untrusted/);
    // One of Quire's own (always trusted): running it untrusted is no advice.
    const native = strayOf(kernel, thrownAt(join(folderOf('history'), 'version-writer.js')));
    expect(native.plugin).toEqual({ id: 'history', native: true });
    expect(describeStray(native)).toMatch(/Quire's own plugin 'history' .*please report it/);
    expect(describeStray(native)).not.toMatch(/untrusted/);
    // The kernel's code first, a plugin's under it (a plugin calling into the kernel): the kernel's.
    const kernels = strayOf(kernel, thrownAt(join(CODE_ROOT, 'core', 'pipeline', 'action-pipeline.js'), join(folderOf('careless'), 'index.js')));
    expect(kernels.plugin).toBeUndefined();
    expect(describeStray(kernels)).toMatch(/an error no call caught .*please report it/);
  });
});
