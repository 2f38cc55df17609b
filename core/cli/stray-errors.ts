import { dirname, sep } from 'node:path';
import type { Kernel } from '../kernel.js';
import { recordId } from '../plugins/catalog-checks.js';

/** An error thrown outside any call in this process, and the plugin whose code it came from, if any. */
export interface StrayError {
  error: unknown;
  plugin?: string;
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
  const onError = (thrown: unknown): void => {
    const plugin = pluginOf(kernel, thrown);
    report({ error: thrown, ...(plugin ? { plugin } : {}) });
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

/** The plugin owning the first frame of the stack that lies in a plugin's folder (its manifest's). */
function pluginOf(kernel: Kernel, thrown: unknown): string | undefined {
  const stack = thrown instanceof Error ? thrown.stack ?? '' : '';
  const folders = (kernel.plugins.getCatalog()?.all ?? []).map((record) => ({ id: recordId(record), folder: dirname(record.ok ? record.entryPath : record.file) + sep }));
  for (const line of stack.split('\n').slice(1)) {
    const owner = folders.find((candidate) => line.includes(candidate.folder));
    if (owner) return owner.id;
  }
  return undefined;
}

/** What `quire serve` says of a stray error: one line, whose it was, and what to do. */
export function describeStray(stray: StrayError): string {
  const what = stray.error instanceof Error ? `${stray.error.name}: ${stray.error.message}` : String(stray.error);
  const where = stray.error instanceof Error ? (stray.error.stack ?? '').split('\n').slice(1, 4).map((line) => line.trim()).join(' | ') : '';
  const whose = stray.plugin
    ? `plugin '${stray.plugin}' threw outside any call (${what}${where ? `; ${where}` : ''}). Fix it, or run it untrusted ("plugins": { "${stray.plugin}": { "trusted": false } }): in a process of its own, such an error ends that process, not the kernel`
    : `an error no call caught (${what}${where ? `; ${where}` : ''})`;
  return `quire serve: ${whose}. Stopping in order: requests under way finish, journals close, the lock is released`;
}
