import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Small tmpfs mounts for tests of a full disk: a real file system that really answers ENOSPC, with
 * nothing faked. Mounting needs root (CAP_SYS_ADMIN); where it is not allowed, the tests that need it
 * are skipped with `mountRefusal` as the reason.
 */
function probe(): string | undefined {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (CAP_SYS_ADMIN)';
  const dir = mkdtempSync(join(tmpdir(), 'quire-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'quire-probe', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `mount -t tmpfs was refused: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    rmdirSync(dir);
  }
}

/** Why tmpfs tests cannot run here, or undefined when they can. */
export const mountRefusal: string | undefined = probe();
export const canMount = mountRefusal === undefined;

/** Mounts a tmpfs of `bytes` at `dir` (created if absent). */
export function mountTmpfs(dir: string, bytes: number): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'quire-test', dir], { stdio: 'pipe' });
}

/** Unmounts; lazily if something still holds a file there, so a failed test never leaves a mount busy. */
export function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
}

/**
 * Fills the file system holding `dir` to the last byte with one file and returns its path: halving
 * the chunk on each ENOSPC ends with every block taken, so the next write that needs a new block fails.
 */
export function fillDisk(dir: string, name = '.filler'): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1 << 16, 0x2e);
  try {
    for (let size = chunk.length; size >= 1;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Frees what `fillDisk` took. */
export function freeDisk(filler: string): void {
  rmSync(filler, { force: true });
}
