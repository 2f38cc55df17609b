import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../../core/index.js';
import type { PackageFile } from './skill-package.js';

/** One skill to put in place: its name (its folder) and every file it will hold. */
export interface SkillWrite {
  name: string;
  files: readonly PackageFile[];
}

const STAGING_PREFIX = '.skills-staging-';

/**
 * Writes skills all or nothing. Every file is written and fsynced in a staging folder beside skills/
 * (same file system, so the moves are renames); then each skill folder is swapped in by rename, the
 * replaced one moved aside first; a failure part way moves everything back. Files are written with
 * mode 0644 whatever the package said: a skill's scripts are text here, never programs.
 * One write at a time, so two saves of one skill cannot interleave their swaps.
 */
export class SkillWriter {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly skillsDir: string, private readonly log: Logger) {}

  /** Runs `work` after every earlier write has finished. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Puts the skills in place; returns the names that replaced an existing folder. */
  async commit(skills: readonly SkillWrite[]): Promise<{ replaced: string[] }> {
    const staging = await this.stage();
    try {
      for (const skill of skills) {
        for (const file of skill.files) await writeDurably(join(staging, 'new', skill.name, ...file.path.split('/')), file.data);
        for (const folder of new Set(skill.files.map((file) => dirname(join(staging, 'new', skill.name, ...file.path.split('/')))))) await syncFolder(folder);
      }
      await syncFolder(join(staging, 'new'));
      await mkdir(this.skillsDir, { recursive: true });
      return await this.swapIn(staging, skills.map((skill) => skill.name));
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Moves a skill's folder out of skills/ and deletes it. */
  async remove(name: string): Promise<void> {
    const staging = await this.stage();
    try {
      await mkdir(join(staging, 'old'));
      await rename(join(this.skillsDir, name), join(staging, 'old', name));
      await syncFolder(this.skillsDir);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * After a crash: a staging folder left behind is removed, and a skill moved aside for a swap that never
   * finished is put back where nothing took its place.
   */
  async recover(): Promise<void> {
    const parent = dirname(this.skillsDir);
    const leftovers = (await readdir(parent).catch(() => [] as string[])).filter((name) => name.startsWith(STAGING_PREFIX));
    for (const leftover of leftovers) {
      const old = join(parent, leftover, 'old');
      for (const name of await readdir(old).catch(() => [] as string[])) {
        if (!(await exists(join(this.skillsDir, name)))) {
          await mkdir(this.skillsDir, { recursive: true });
          await rename(join(old, name), join(this.skillsDir, name));
          this.log.warn(`skill '${name}' restored from an interrupted write`);
        }
      }
      await rm(join(parent, leftover), { recursive: true, force: true });
    }
  }

  private async stage(): Promise<string> {
    const staging = join(dirname(this.skillsDir), `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
    await mkdir(staging, { recursive: true });
    return staging;
  }

  private async swapIn(staging: string, names: readonly string[]): Promise<{ replaced: string[] }> {
    await mkdir(join(staging, 'old'));
    const done: { name: string; replaced: boolean }[] = [];
    try {
      for (const name of names) {
        const target = join(this.skillsDir, name);
        const replaced = await exists(target);
        if (replaced) await rename(target, join(staging, 'old', name));
        done.push({ name, replaced });
        await rename(join(staging, 'new', name), target);
      }
      await syncFolder(this.skillsDir);
    } catch (error) {
      // Back to how it was: the new folders out, the old ones in.
      for (const { name, replaced } of done.reverse()) {
        await rename(join(this.skillsDir, name), join(staging, 'new', name)).catch(() => undefined);
        if (replaced) await rename(join(staging, 'old', name), join(this.skillsDir, name)).catch((undo: unknown) => this.log.error(`skill '${name}' could not be put back after a failed write`, { error: String(undo) }));
      }
      throw error;
    }
    return { replaced: done.filter((entry) => entry.replaced).map((entry) => entry.name) };
  }
}

async function writeDurably(path: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // wx: the staging folder is new and ours; a file already there means two package entries collided.
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(() => true, () => false);
}
