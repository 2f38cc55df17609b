import { createToken } from '../../core/index.js';

/**
 * What the skills plugin offers the snapshots plugin, so that a snapshot or a rollback of
 * `<workspace>/skills/` never interleaves with a skill being written, and a rollback keeps the
 * versions of the skills it changes as the skill tool's own writes do.
 */
export interface SkillsWrites {
  /** Runs `work` once every skill write under way has finished; none starts until it ends. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Keeps the current files of each named skill (those that exist) as a version, before something
   * outside the skill tool changes them. Call inside `exclusive`; names that are no skill are skipped.
   */
  keepVersions(names: readonly string[], op: 'rollback', by: string): Promise<void>;
}

export const SKILLS_WRITES = createToken<SkillsWrites>('skills.writes');
