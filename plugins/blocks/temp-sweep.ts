import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { REMOVING } from './document-removal.js';

/** The temporary file of core/fs/atomic-write.ts: `.<name>.<12 hex digits>.tmp`, beside its target. */
export const ATOMIC_TEMP = /^\..+\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes, under `folder`, the temporary files that atomic writes killed between creating and renaming
 * them left behind, and the folders that removals killed midway had set aside (document-removal.ts),
 * and nothing else: files and folders named exactly like them, last changed before this process
 * started. A younger one may belong to a write of this process under way; the workspace lock keeps
 * other processes from writing here. Returns the paths removed; never throws (a folder that cannot be
 * read is left as it is).
 */
export async function sweepTempFiles(folder: string, before: number = performance.timeOrigin): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && REMOVING.test(entry.name)) {
      // A folder set aside for removal by an earlier process (ctime: a rename aside changes it, not its mtime).
      const path = join(entry.parentPath, entry.name);
      const info = await lstat(path).catch(() => undefined);
      if (!info?.isDirectory() || info.ctimeMs >= before) continue;
      if (await rm(path, { recursive: true, force: true }).then(() => true, () => false)) removed.push(path);
      continue;
    }
    if (!entry.isFile() || !ATOMIC_TEMP.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile() || info.mtimeMs >= before) continue;
    if (await rm(path).then(() => true, () => false)) removed.push(path);
  }
  return removed;
}
