import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
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
  await mkdir(folder, { recursive: true });
  const temp = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temp, 'wx', options.mode ?? 0o644);
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
  await syncFolder(folder);
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
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

function writeAtomicallySync(path: string, data: string | Uint8Array, options: AtomicWriteOptions): void {
  const folder = dirname(path);
  mkdirSync(folder, { recursive: true });
  const temp = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', options.mode ?? 0o644);
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
