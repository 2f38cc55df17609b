/**
 * A cold disk for the benchmarks: the OS file cache emptied (COLD=1), and reads throttled to what this
 * machine's disk does when the host caches nothing (COLD_DISK=<MB/s>:<reads/s>). In a virtual machine,
 * dropping the guest's cache leaves the host's, so COLD=1 alone often reads from memory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Empties the kernel's page cache (root only): the next start reads everything from disk. */
export function dropCaches(): void {
  execFileSync('sync');
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3\n');
  } catch (error) {
    throw new Error(`COLD=1 needs to write /proc/sys/vm/drop_caches (run as root): ${(error as Error).message}`);
  }
}

/**
 * Evicts every file under `folder` from the OS page cache (POSIX_FADV_DONTNEED, through GNU dd's
 * `iflag=nocache`), without root: the next start reads them from the disk. Answers the bytes of them
 * still cached after (fincore), so that a run says how cold it was. In a virtual machine the host's
 * cache is untouched, as with COLD=1.
 */
export function evictFiles(folder: string): number {
  execFileSync('sync');
  execFileSync('sh', ['-c', 'find "$1" -type f -print0 | xargs -0 -r -n 64 sh -c \'for f; do dd if="$f" iflag=nocache count=0 status=none; done\' _', '_', folder]);
  const resident = execFileSync('sh', ['-c', 'find "$1" -type f -print0 | xargs -0 -r fincore --bytes --noheadings --output RES', '_', folder], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  return resident.split('\n').reduce((sum, line) => sum + (Number(line.trim()) || 0), 0);
}

/** The disk (major:minor) holding a file system's device: blkio throttles whole disks, not partitions. */
function wholeDisk(dev: number): string {
  // Linux's encoding of a device number: major in bits 8-19, minor in bits 0-7 and 20-31.
  const own = `${(dev >> 8) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
  let node: string;
  try {
    node = realpathSync(`/sys/dev/block/${own}`);
  } catch {
    throw new Error(`COLD_DISK: the workspace's file system (device ${own}) is not on a block device (an overlay or a memory file system?)`);
  }
  return existsSync(join(node, 'partition')) ? readFileSync(join(dirname(node), 'dev'), 'utf8').trim() : own;
}

/**
 * Moves this process into a cgroup (v1 blkio, root only) whose reads from the block device under
 * `workspace` are throttled to `spec` = <MB/s>:<reads/s>, as a disk that caches nothing would read
 * (60:1500 is what this machine's disk did uncached). Threads started afterwards are included.
 */
export function throttleDisk(spec: string, workspace: string): void {
  const match = /^(\d+(?:\.\d+)?):(\d+)$/.exec(spec);
  if (!match) throw new Error(`COLD_DISK=${spec}: expected <MB/s>:<reads/s>, e.g. 60:1500`);
  const device = wholeDisk(statSync(workspace).dev);
  const group = '/sys/fs/cgroup/blkio/quire-cold-disk';
  try {
    mkdirSync(group, { recursive: true });
    writeFileSync(`${group}/blkio.throttle.read_bps_device`, `${device} ${Math.round(Number(match[1]) * 2 ** 20)}\n`);
    writeFileSync(`${group}/blkio.throttle.read_iops_device`, `${device} ${match[2]}\n`);
    writeFileSync(`${group}/cgroup.procs`, `${process.pid}\n`);
  } catch (error) {
    throw new Error(`COLD_DISK needs root and cgroup v1 blkio at /sys/fs/cgroup/blkio: ${(error as Error).message}`);
  }
  console.log(`reads from device ${device} throttled to ${match[1]} MB/s and ${match[2]} reads/s (threads started from now on included)`);
}
