import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidId } from '../../core/index.js';
import type { BlockStore } from './block-store.js';
import type { SyncReport } from './workspace-sync.js';

const SETTLE_MS = 150;

/**
 * Picks up documents edited, added or removed by hand while serving. Events for files this kernel just
 * wrote (their size and mtime match the index) are ignored; anything else runs an incremental sync,
 * which the caller queues behind the writes already waiting.
 */
export function watchData(store: BlockStore, sync: () => Promise<SyncReport>): { close(): void } {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let watcher: FSWatcher | undefined;
  const flush = (): void => {
    timer = undefined;
    const paths = [...pending];
    pending.clear();
    void needsSync(store, paths)
      .then((needed) => (needed && !closed ? sync() : undefined))
      .catch((error: unknown) => store.log.warn('could not sync a hand edit', { error: String(error) }));
  };
  try {
    watcher = watch(store.dataDir, { recursive: true }, (_event, name) => {
      if (closed || name === null) return;
      const file = String(name);
      // Temporary files of atomic writes come and go with every save.
      if (file.split(/[\\/]/).some((part) => part.startsWith('.') && part !== '.notebook.json')) return;
      pending.add(file);
      if (!timer) timer = setTimeout(flush, SETTLE_MS);
    });
    watcher.on('error', (error) => store.log.warn('the data folder watcher stopped', { error: String(error) }));
  } catch (error) {
    store.log.warn('cannot watch the data folder; hand edits are picked up at the next start', { error: String(error) });
  }
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** True unless every path is a document whose file matches what the index recorded. */
async function needsSync(store: BlockStore, paths: string[]): Promise<boolean> {
  for (const path of paths) {
    const name = path.split(/[\\/]/).pop() ?? '';
    const id = name.endsWith('.json') ? name.slice(0, -5) : '';
    if (!isValidId(id)) return true;
    const record = store.index.document(id);
    if (!record) return true;
    const info = await stat(join(store.dataDir, path)).catch(() => undefined);
    if (!info || record.path !== path.split(/[\\/]/).join('/') || record.mtime_ms !== Math.trunc(info.mtimeMs) || record.size !== info.size) return true;
  }
  return false;
}
