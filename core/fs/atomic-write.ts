import { closeSync, constants, fsyncSync, mkdirSync, open as openCallback, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, link, open, rename, rm, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { describeWrite, diskFull } from './disk-full.js';

export interface AtomicWriteOptions {
  /** File mode for the new file, e.g. 0o600 for secrets. */
  mode?: number;
}

/**
 * Writes a file so that a crash leaves either the old content or the new, never a torn file:
 * temporary file in the same folder → fsync → rename → fsync the folder (so the rename itself is durable).
 * On a full disk the old content stays and the error is DISK_FULL naming the file (see disk-full.ts).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  try {
    await writeAtomically(path, data, options);
  } catch (error) {
    throw diskFull(error, describeWrite(path));
  }
}

async function writeAtomically(path: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const folder = dirname(path);
  const temp = temporaryPathFor(path);
  const mode = options.mode ?? 0o644;
  // The folder is made only when it is missing: one system call fewer on every other write.
  const file = await open(temp, 'wx', mode).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    // Each folder made is synced in its parent: the file's own sync and its folder's do not keep a new
    // folder's entry (a power cut lost an acknowledged first child document with its folder).
    await makeFolderDurably(folder);
    return open(temp, 'wx', mode);
  });
  try {
    await file.writeFile(data);
    await file.sync();
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  await file.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolderShared(folder);
}

/** Per folder: the folder fsync not yet started (which later renames join) and the one running. */
const folderSyncs = new Map<string, { waiting?: Promise<void> | undefined; running?: Promise<void> | undefined }>();

/**
 * Makes the renames done in a folder so far durable. Files written at the same time in one folder
 * share one folder fsync (group commit): a rename joins the fsync that has not started yet, or, if one
 * is running (it may have started before the rename), the next one, which starts when it ends.
 */
function syncFolderShared(folder: string): Promise<void> {
  let state = folderSyncs.get(folder);
  if (!state) folderSyncs.set(folder, (state = {}));
  if (state.waiting) return state.waiting;
  const current = state;
  const sync: Promise<void> = (current.running ?? Promise.resolve()).catch(() => undefined).then(() => {
    current.waiting = undefined;
    current.running = sync;
    return syncFolder(folder);
  }).finally(() => {
    if (current.running === sync) current.running = undefined;
    if (!current.running && !current.waiting && folderSyncs.get(folder) === current) folderSyncs.delete(folder);
  });
  current.waiting = sync;
  return sync;
}

/** fsync of a folder: makes the creation, rename or removal of its entries durable. */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes `dir` (if new) with each folder made synced in its parent, from the deepest up, so that a
 * record written in it cannot vanish with the folder in a power cut while the files it covers survive.
 */
export async function makeFolderDurably(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  for (let folder = dir; folder.length >= first.length; folder = dirname(folder)) await syncFolder(dirname(folder));
}

/** makeFolderDurably, for the synchronous writes. */
function makeFolderDurablySync(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  for (let folder = dir; folder.length >= first.length; folder = dirname(folder)) {
    const fd = openSync(dirname(folder), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/** Pretty-printed JSON with a trailing newline, written atomically. */
export async function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}

/**
 * The same steps with synchronous calls, for small files on a latency-sensitive path: each of the
 * eight steps of the asynchronous version is a round trip through the thread pool, which for a file
 * of a few hundred kilobytes adds up to about as much as the write itself. It blocks the event loop
 * while it runs (about a millisecond for such a file, as a better-sqlite3 transaction does).
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  try {
    writeAtomicallySync(path, data, options);
  } catch (error) {
    throw diskFull(error, describeWrite(path));
  }
}

function openCreatingFolder(temp: string, folder: string, mode: number): number {
  try {
    return openSync(temp, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    makeFolderDurablySync(folder);
    return openSync(temp, 'wx', mode);
  }
}

const openFd = promisify(openCallback);

/** openCreatingFolder on the thread pool: a file descriptor, not a FileHandle, so the rest can stay synchronous. */
async function openCreatingFolderAsync(temp: string, folder: string, mode: number): Promise<number> {
  try {
    return await openFd(temp, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await makeFolderDurably(folder);
    return openFd(temp, 'wx', mode);
  }
}

function writeAtomicallySync(path: string, data: string | Uint8Array, options: AtomicWriteOptions): void {
  const folder = dirname(path);
  const temp = temporaryPathFor(path);
  const fd = openCreatingFolder(temp, folder, options.mode ?? 0o644);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  const folderFd = openSync(folder, 'r');
  try {
    fsyncSync(folderFd);
  } finally {
    closeSync(folderFd);
  }
}

/**
 * Copies `source` to `target` as writeFileAtomic writes: a temporary file beside the target, synced,
 * renamed over it, the folder synced. A kill leaves the old target or the new one, never a torn copy
 * (an attachment an import copies), and what it leaves aside is named as the start-up sweep knows.
 */
export async function copyFileAtomic(source: string, target: string, options: { exclusive?: boolean } = {}): Promise<void> {
  const temp = temporaryPathFor(target);
  try {
    await copyFile(source, temp);
    const handle = await open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    // Exclusive: linked into place, which fails (EEXIST) when a file is there already, made by anyone
    // since the caller looked (a rename would replace it).
    if (options.exclusive === true) {
      await linkOrCopyExclusive(temp, target);
      await rm(temp, { force: true });
    } else {
      await rename(temp, target);
    }
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
    throw diskFull(error, describeWrite(target));
  }
  await syncFolder(dirname(target));
}

/**
 * Replaces a file whole (temporary file, rename) without making it durable: a crash of the process
 * leaves the old content or the new, a crash of the machine may leave either or neither. For writers
 * that make the content durable elsewhere first (the document write journal) and sync the file later.
 * Asynchronous: renaming over a file makes ext4 start writing the new one out (auto_da_alloc), which
 * can take milliseconds that the event loop need not wait through.
 */
export async function replaceFile(path: string, data: string | Uint8Array): Promise<void> {
  try {
    const folder = dirname(path);
    const temp = temporaryPathFor(path);
    // Creating the temporary file (a new directory entry) costs the event loop about 0.2 ms, which under
    // many concurrent writes is the loop's time everyone waits for: it is made on the thread pool.
    // Writing into the page cache is quick, quicker than a thread-pool round trip; then only the rename waits.
    const fd = await openCreatingFolderAsync(temp, folder, 0o644);
    try {
      writeFileSync(fd, data);
    } catch (error) {
      closeSync(fd);
      rmSync(temp, { force: true });
      throw error;
    }
    closeSync(fd);
    try {
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  } catch (error) {
    throw diskFull(error, describeWrite(path));
  }
}

/** A new hidden name beside `path` for the file that will replace it (swept at start when left behind). */
function temporaryPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Codes of a file system without hard links (exFAT, FAT, many SMB shares and FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK', 'ENOSYS']);

/**
 * `from` put at `to` only if nothing is there (EEXIST otherwise): a hard link, whole at once; where
 * the file system has none, a copy that refuses an existing file (whole unless the machine stops
 * during it).
 */
export async function linkOrCopyExclusive(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }
}
