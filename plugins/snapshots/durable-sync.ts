import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';

/**
 * From this many paths on, one syncfs (the whole file system flushed in one call, through coreutils'
 * `sync -f`) is cheaper than an fsync each: an fsync costs 1–5 ms here whatever its size, a syncfs
 * 10–40 ms plus a few for the process, so a first snapshot of 10,000 files waits for two syncfs
 * instead of 20,000 fsyncs.
 */
const SYNCFS_FROM = 48;

/** fsyncs in flight at once: the thread pool has four threads and a file system journal batches them. */
const FSYNC_PARALLEL = 8;

/** Set once `sync -f` is found missing or refused, so the fallback is not retried at every batch. */
let syncfsUnavailable = false;

/** Makes each path durable: a file's data, a folder's entries (its names, as renames left them). */
export async function syncPaths(paths: string[], fileSystemOf: string): Promise<void> {
  if (paths.length === 0) return;
  if (paths.length >= SYNCFS_FROM && !syncfsUnavailable && await syncFileSystem(fileSystemOf)) return;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) await fsyncPath(paths[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(FSYNC_PARALLEL, paths.length) }, worker));
}

/** fsync of one file or folder (Linux allows it on a descriptor opened for reading). */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * syncfs(2) of the file system holding `path`; false when it cannot be used here (no coreutils `sync`,
 * another system), and the caller falls back to an fsync per path. A failure of the flush itself
 * (an I/O error) is thrown: the data is not known to be on disk.
 */
function syncFileSystem(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    if (process.platform !== 'linux') {
      syncfsUnavailable = true;
      resolve(false);
      return;
    }
    execFile('sync', ['-f', path], { timeout: 120_000 }, (error, _stdout, stderr) => {
      if (!error) {
        resolve(true);
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      // Not found, or a `sync` that does not know -f: the fallback is as durable, only slower.
      if (code === 'ENOENT' || code === 'EACCES' || /invalid option|unrecognized option/i.test(stderr)) {
        syncfsUnavailable = true;
        resolve(false);
        return;
      }
      reject(new Error(`syncfs of ${path} failed: ${stderr.trim() || error.message}`, { cause: error }));
    });
  });
}
