import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { link, mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KernelError } from './errors.js';
import { describeWrite, diskFull } from './fs/disk-full.js';

interface LockRecord {
  pid: number;
  host: string;
  since: string;
  /**
   * When the holder process started (field 22 of /proc/<pid>/stat) and the boot it started in: a pid
   * alone is reused once its process ends, so a live process with the pid is the holder only if these match.
   */
  start?: string;
  boot?: string;
  /**
   * How often (ms) the holder touches the lock's time of change. A host cannot see whether a process of
   * another host (a container's new hostname, another machine on a shared folder) is alive: a lock whose
   * holder promised a heartbeat and has given none for STALE_BEATS of them is taken over.
   */
  beat?: number;
}

/** The holder touches the lock this often; a lock of another host is stale after this many beats missed (and at least STALE_MIN_MS). */
export const LOCK_HEARTBEAT_MS = 30_000;
const STALE_BEATS = 20;
const STALE_MIN_MS = 10 * 60_000;

export interface LockOptions {
  /** Default LOCK_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /**
   * The lock is no longer this holder's (taken over by a kernel of another host after this one missed
   * its heartbeats, a suspended machine; or removed by hand): the caller must stop writing.
   */
  onLost?: (holder: string) => void;
}

/** Holds `<workspace>/.quire/kernel.lock` for as long as a kernel has the workspace open. */
export interface WorkspaceLock {
  readonly file: string;
  release(): Promise<void>;
}

/**
 * Takes the workspace lock: a second kernel on the same folder (another process, or another kernel in
 * this one) would interleave writes to documents, the index and the session files. A lock left by a
 * dead process on this host is taken over; a live holder is named in the error.
 */
export async function acquireWorkspaceLock(privateDir: string, options: LockOptions = {}): Promise<WorkspaceLock> {
  await mkdir(privateDir, { recursive: true, mode: 0o700 });
  const file = join(privateDir, 'kernel.lock');
  const beat = options.heartbeatMs ?? LOCK_HEARTBEAT_MS;
  const mine: LockRecord = { pid: process.pid, host: hostname(), since: new Date().toISOString(), ...processIdentity(process.pid), beat };
  const text = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, text).catch((error: unknown) => { throw diskFull(error, describeWrite(file)); })) return heldLock(file, text, beat, options.onLost);
    const holder = await readHolder(file);
    if (holder === 'gone') continue;
    if (holder !== 'unreadable' && await isAlive(holder, file)) {
      const elsewhere = holder.host !== hostname();
      throw new KernelError('WORKSPACE_LOCKED',
        `The workspace is open in another kernel (pid ${holder.pid} on ${holder.host}, since ${holder.since}; its lock is ${file}); stop it first`
        + (elsewhere ? `. A kernel of another host cannot be seen from here: ${holder.beat !== undefined ? `its lock is taken over once it has not been touched for ${Math.round(staleAfter(holder.beat) / 60_000)} minutes, or` : 'if it no longer runs (a container started again under a new hostname),'} remove that file by hand` : ''),
        { details: { file, pid: holder.pid, host: holder.host } });
    }
    await takeOver(file, holder);
  }
  throw new KernelError('WORKSPACE_LOCKED', `Could not take the workspace lock ${file}: other kernels keep racing for it`, { details: { file } });
}

async function createExclusive(file: string, text: string): Promise<boolean> {
  // Written beside the lock and hard-linked into place: link fails if the lock exists, and the lock
  // never exists half-written, so a reader never sees an empty holder.
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
}

async function readHolder(file: string): Promise<LockRecord | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid === 'number' && typeof value.host === 'string') {
      return {
        pid: value.pid, host: value.host, since: String(value.since ?? ''),
        ...(typeof value.start === 'string' ? { start: value.start } : {}), ...(typeof value.boot === 'string' ? { boot: value.boot } : {}),
        ...(typeof value.beat === 'number' ? { beat: value.beat } : {}),
      };
    }
  } catch { /* fall through */ }
  return 'unreadable';
}

const staleAfter = (beat: number): number => Math.max(STALE_MIN_MS, STALE_BEATS * beat);

async function isAlive(holder: LockRecord, file: string): Promise<boolean> {
  // A process of another host cannot be checked from here: its lock is held while its heartbeat goes
  // on (a lock without one, from an older kernel, is held until removed by hand), never risking two writers.
  if (holder.host !== hostname()) {
    const beat = holder.beat;
    if (beat === undefined || !Number.isFinite(beat) || beat <= 0) return true;
    const touched = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    if (touched === undefined || Date.now() - touched < staleAfter(beat)) return true;
    // Old by this host's clock, which may run ahead of the holder's: watched for two and a half of its
    // beats (at most 90 s), timed here, it is stale only if it does not move. Gone meanwhile (released):
    // not held, and the next attempt takes it.
    await new Promise((resolve) => setTimeout(resolve, Math.min(2.5 * beat, 90_000)));
    const now = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    return now !== undefined && now !== touched;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The pid is in use: by the holder, or by a process that got the pid after the holder ended. What
  // cannot be read (no /proc, a lock from an older kernel) counts as the holder: never two writers.
  const now = processIdentity(holder.pid);
  if (holder.boot !== undefined && now.boot !== undefined && holder.boot !== now.boot) return false;
  return holder.start === undefined || now.start === undefined || holder.start === now.start;
}

/** The start time of a process and the current boot's id, where /proc has them (Linux). */
function processIdentity(pid: number): { start?: string; boot?: string } {
  const read = (path: string): string | undefined => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  };
  const stat = read(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its ')'.
  const start = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const boot = read('/proc/sys/kernel/random/boot_id')?.trim();
  return { ...(start ? { start } : {}), ...(boot ? { boot } : {}) };
}

/**
 * Moves a dead holder's lock aside (rename is atomic, so of two kernels taking over only one moves it)
 * and checks that what was moved is the lock that was judged dead, not one a faster kernel just took.
 */
async function takeOver(file: string, judged: LockRecord | 'unreadable'): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${Date.now()}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readHolder(aside);
  const same = judged === 'unreadable' ? moved === 'unreadable'
    : typeof moved === 'object' && moved.pid === judged.pid && moved.since === judged.since;
  if (!same) await link(aside, file).catch(() => undefined);
  await rm(aside, { force: true });
}

function heldLock(file: string, text: string, beat: number, onLost: ((holder: string) => void) | undefined): WorkspaceLock {
  let released = false;
  let touching = false;
  // The heartbeat: the lock's time of change moves while this kernel holds it, and a lock that is no
  // longer this kernel's is said at once (nothing here can stop the writes under way: the caller must).
  const timer = setInterval(() => {
    if (touching || released) return;
    touching = true;
    void (async () => {
      try {
        const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? '' : undefined));
        if (released || current === undefined) return;
        if (current !== text) {
          clearInterval(timer);
          const holder = current === '' ? 'nobody (the file was removed)' : describeHolder(current);
          onLost?.(holder);
          return;
        }
        const now = new Date();
        await utimes(file, now, now).catch(() => undefined);
      } finally {
        touching = false;
      }
    })();
  }, beat);
  timer.unref();
  return {
    file,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      // Only remove the lock if it is still ours.
      const current = await readFile(file, 'utf8').catch(() => undefined);
      if (current === text) await rm(file, { force: true });
    },
  };
}

function describeHolder(text: string): string {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    return `pid ${String(value.pid)} on ${String(value.host)}, since ${String(value.since)}`;
  } catch {
    return 'an unreadable lock';
  }
}
