import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { admin, useBlocks } from '../blocks/blocks-harness.js';

export { admin };

/** A kernel with the real plugins (skills among them), and the skill actions as the person calls them. */
export function useSkills() {
  const blocks = useBlocks();
  async function boot(skillsConfig: Record<string, unknown> = {}, workspace?: string) {
    const { kernel } = await blocks.boot({ ...(workspace ? { workspace } : {}), config: { plugins: { skills: { config: skillsConfig } } } });
    return { kernel, skill: skillCaller(kernel) };
  }
  return { ...blocks, boot };
}

export type SkillCall = <T = Record<string, unknown>>(action: string, input?: Record<string, unknown>, principal?: Principal) => Promise<T>;

export function skillCaller(kernel: Kernel): SkillCall {
  return async <T,>(action: string, input: Record<string, unknown> = {}, principal: Principal = admin): Promise<T> => {
    const outcome = await kernel.pipeline.call({ target: `skill_${action}`, input, principal, ...(principal.kind === 'agent' ? { sessionMode: 'auto' as const } : {}) });
    if (outcome.status !== 'ok') throw new Error(`skill_${action} asked for a confirmation`);
    return outcome.value as T;
  };
}

/** A SKILL.md with the given front matter lines and body. */
export function skillMd(frontMatter: string, body = '# Instructions\n\nDo the thing.\n'): string {
  return `---\n${frontMatter}\n---\n\n${body}`;
}

/** Writes files (relative path → text) under `root`. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, data] of Object.entries(files)) {
    await mkdir(join(root, ...path.split('/').slice(0, -1)), { recursive: true });
    await writeFile(join(root, ...path.split('/')), data);
  }
}

/** Every file under a folder, relative, sorted ([] when it does not exist). */
export async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => !entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1)).sort();
}
