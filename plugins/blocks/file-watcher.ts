import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isValidId } from '../../core/index.js';
import type { BlockStore } from './block-store.js';
import type { SyncReport } from './workspace-sync.js';

const SETTLE_MS = 150;

/** Dot files are temporary files of atomic writes, which come and go with every save; .notebook.json is not. */
function ignored(path: string): boolean {
  return path.split(/[\\/]/).some((part) => part.startsWith('.') && part !== '.notebook.json');
}

/**
 * Picks up documents edited, added or removed by hand while serving. Events for files this kernel just
 * wrote (their size and mtime match the index) are ignored; anything else runs an incremental sync,
 * which the caller queues behind the writes already waiting.
 */
export function watchData(store: BlockStore, sync: () => Promise<SyncReport>): { close(): void } {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // One sync at a time, and at most one more after it: a sync reads the whole workspace as it is when it
  // runs, so edits arriving meanwhile need one more, not one each (a sync tool's first run queued a full
  // sync per 150 ms batch, without bound, and every write waited behind them).
  let syncing = false;
  let again = false;
  const runSync = (): void => {
    if (syncing) { again = true; return; }
    syncing = true;
    void sync()
      .catch((error: unknown) => store.log.warn('could not sync a hand edit', { error: String(error) }))
      .finally(() => {
        syncing = false;
        if (again && !closed) {
          again = false;
          runSync();
        }
      });
  };
  const flush = (): void => {
    timer = undefined;
    const paths = [...pending];
    pending.clear();
    void needsSync(store, paths)
      .then((needed) => { if (needed && !closed) runSync(); })
      .catch((error: unknown) => store.log.warn('could not sync a hand edit', { error: String(error) }));
  };
  const changed = (path: string): void => {
    if (closed || ignored(path)) return;
    pending.add(path);
    if (!timer) timer = setTimeout(flush, SETTLE_MS);
  };
  const warn = (message: string, error: unknown): void => store.log.warn(message, { error: String(error) });
  const watcher = process.platform === 'linux' ? new FolderWatchers(store.dataDir, changed, warn) : recursiveWatcher(store.dataDir, changed, warn);
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      watcher.close();
    },
  };
}

/** Where the platform watches a tree natively (macOS, Windows), one recursive watcher. */
function recursiveWatcher(root: string, changed: (path: string) => void, warn: (message: string, error: unknown) => void): { close(): void } {
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(root, { recursive: true }, (_event, name) => { if (name !== null) changed(String(name)); });
    watcher.on('error', (error) => warn('the data folder watcher stopped', error));
  } catch (error) {
    warn('cannot watch the data folder; hand edits are picked up at the next start', error);
  }
  return { close: () => watcher?.close() };
}

/**
 * On Linux, Node 20 emulates a recursive watch by stat-ing and watching every file, synchronously, when
 * it starts: 10,000 documents held up start-up by a second or more and used 10,000 inotify watches.
 * A folder's inotify watch already reports its files being written, added, removed and renamed, so only
 * the folders are watched here (the data folder, notebooks, and the folders of child documents), found by
 * an asynchronous walk that reads no file; a folder that appears later is watched when it is reported.
 */
class FolderWatchers {
  private readonly watchers = new Map<string, FSWatcher>();
  private closed = false;

  constructor(private readonly root: string, private readonly changed: (path: string) => void, private readonly warn: (message: string, error: unknown) => void) {
    void this.add(root, true);
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  /** Watches `folder` and, walking down, every folder below it; files found later than the first walk are reported. */
  private async add(folder: string, starting: boolean): Promise<void> {
    if (this.closed || this.watchers.has(folder)) return;
    try {
      const watcher = watch(folder, (_event, name) => { if (name !== null) this.event(folder, String(name)); });
      watcher.on('error', () => this.drop(folder));
      this.watchers.set(folder, watcher);
    } catch (error) {
      if (folder === this.root) this.warn('cannot watch the data folder; hand edits are picked up at the next start', error);
      return;
    }
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.name.startsWith('.') && entry.name !== '.notebook.json') continue;
      const path = join(folder, entry.name);
      // A folder moved in whole: what it holds is new to the index as well.
      if (!starting) this.changed(relative(this.root, path));
      if (entry.isDirectory() && isValidId(entry.name)) await this.add(path, starting);
    }
  }

  private event(folder: string, name: string): void {
    const path = join(folder, name);
    const inside = relative(this.root, path);
    if (inside === '' || ignored(inside)) return;
    this.changed(inside);
    // A folder added, renamed or removed: watch it, or stop watching it and everything below it. A link is
    // not followed (its target may be anywhere, a home folder of thousands), and only folders named as
    // documents are: a removed file is no watched folder, so it costs no walk over the watched ones.
    void lstat(path).then(
      (info) => { if (info.isDirectory() && isValidId(name)) return this.add(path, false); },
      () => {
        if (!this.watchers.has(path)) return;
        for (const watched of [...this.watchers.keys()]) if (watched === path || watched.startsWith(path + sep)) this.drop(watched);
      },
    );
  }

  private drop(folder: string): void {
    this.watchers.get(folder)?.close();
    this.watchers.delete(folder);
  }
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
