import { dirname, join, sep } from 'node:path';
import { CODE_ROOT } from '../paths.js';
import type { Kernel } from '../kernel.js';
import { recordId } from '../plugins/catalog-checks.js';

/** An error thrown outside any call in this process, and the plugin whose code it came from, if any. */
export interface StrayError {
  error: unknown;
  /** The plugin whose code threw; `native`: one of Quire's own, always trusted. */
  plugin?: { id: string; native: boolean };
}

/**
 * Errors no call catches: a trusted plugin's timer that throws after its action answered, a promise it
 * let fail unwatched. Node stops the process at once (a kernel died mid-request, leaving its lock and
 * serve.json), and running on after one is unsafe: whatever it held is in an unknown state. `quire serve`
 * stops in order instead, naming the plugin whose file is first in the stack. Returns the first such
 * error, and a way to stop listening.
 */
export function watchStrayErrors(kernel: Kernel): { error: Promise<StrayError>; stop(): void } {
  let report!: (stray: StrayError) => void;
  const error = new Promise<StrayError>((resolve) => { report = resolve; });
  let reported = false;
  const onError = (thrown: unknown): void => {
    // Later ones (while stopping) are logged, not lost.
    if (reported) {
      kernel.log.error('another error no call caught, while stopping', { error: thrown instanceof Error ? thrown.stack ?? thrown.message : String(thrown) });
      return;
    }
    reported = true;
    report(strayOf(kernel, thrown));
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return {
    error,
    stop() {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}

/** An error no call caught, with the plugin it is put down to. */
export function strayOf(kernel: Kernel, thrown: unknown): StrayError {
  const plugin = pluginOf(kernel, thrown);
  return { error: thrown, ...(plugin ? { plugin } : {}) };
}

/**
 * The plugin owning the error's first frame of Quire's code or a plugin's: a frame of the kernel's own
 * code first (`<code root>/core/`) makes it the kernel's, even with a plugin's frames under it (a
 * plugin calling into the kernel). Node's internals are passed over.
 */
function pluginOf(kernel: Kernel, thrown: unknown): { id: string; native: boolean } | undefined {
  const stack = thrown instanceof Error ? thrown.stack ?? '' : '';
  const folders = (kernel.plugins.getCatalog()?.all ?? []).map((record) => ({
    id: recordId(record), native: record.source === 'native', folder: dirname(record.ok ? record.entryPath : record.file) + sep,
  }));
  const kernelCode = join(CODE_ROOT, 'core') + sep;
  for (const line of stack.split('\n').slice(1)) {
    const owner = folders.find((candidate) => line.includes(candidate.folder));
    if (owner) return { id: owner.id, native: owner.native };
    if (line.includes(kernelCode)) return undefined;
  }
  return undefined;
}

/** What `quire serve` says of a stray error: one line, whose it was, and what to do. */
export function describeStray(stray: StrayError): string {
  const what = stray.error instanceof Error ? `${stray.error.name}: ${stray.error.message}` : String(stray.error);
  const where = stray.error instanceof Error ? (stray.error.stack ?? '').split('\n').slice(1, 4).map((line) => line.trim()).join(' | ') : '';
  const detail = `${what}${where ? `; ${where}` : ''}`;
  const whose = stray.plugin === undefined ? `an error no call caught (${detail}): a fault of Quire's, please report it`
    : stray.plugin.native ? `Quire's own plugin '${stray.plugin.id}' threw outside any call (${detail}): a fault of Quire's, please report it`
      : `plugin '${stray.plugin.id}' threw outside any call (${detail}). Fix it, or run it untrusted ("plugins": { "${stray.plugin.id}": { "trusted": false } }): in a process of its own, such an error ends that process, not the kernel`;
  return `quire serve: ${whose}. Stopping in order: requests under way finish, journals close, the lock is released`;
}
