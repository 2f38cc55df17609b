import { join, resolve } from 'node:path';
import { SKILLS_LISTING, WORKSPACE, definePlugin, sweepRetention } from '../../core/index.js';
import { skillHandlers } from './skill-actions.js';
import { SkillCatalog } from './skill-catalog.js';
import { limitsFrom, type SkillsConfig } from './skill-limits.js';
import { SkillRecords } from './skill-records.js';
import { SkillStore } from './skill-store.js';
import { SkillVersions } from './skill-versions.js';
import { SkillWriter } from './skill-writer.js';
import { SKILLS_WRITES } from './tokens.js';

/**
 * Skills (DESIGN.md §1, §2): folders under <workspace>/skills (and the config's extra folders, read
 * only) holding a SKILL.md. The prompt lists names and descriptions within a token budget; the skill
 * tool lists, loads, saves, renames, removes and installs them. A skill is only text: its scripts are
 * never run, and its front matter grants nothing.
 */
export default definePlugin<SkillsConfig>({
  async activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const limits = limitsFrom(ctx.config);
    const skillsDir = join(workspace.root, 'skills');
    const records = await SkillRecords.open(join(workspace.agentDir, 'skills.json'), ctx.log);
    const writer = new SkillWriter(skillsDir, ctx.log);
    await writer.recover();
    const roots = [{ path: skillsDir, writable: true }, ...(ctx.config.paths ?? []).map((path) => ({ path: resolve(workspace.root, path), writable: false }))];
    const catalog = new SkillCatalog(roots, limits, records, ctx.log);
    const versions = new SkillVersions(join(workspace.root, 'history', 'skills'), skillsDir, limits, { maxVersions: ctx.config.versionsKept ?? 20, maxAgeDays: ctx.config.versionsMaxAgeDays ?? 90 });
    ctx.provide(SKILLS_LISTING, { promptListing: () => catalog.promptListing() });
    ctx.onDispose(sweepRetention((now, stopped) => versions.pruneAll(now, stopped), ctx.log, 'skill versions'));
    // Snapshots hold skill writes while they read or restore skills/, and a rollback keeps the versions it replaces.
    ctx.provide(SKILLS_WRITES, {
      exclusive: (work) => writer.exclusive(work),
      keepVersions: async (names, op, by) => {
        for (const name of names) {
          // A rollback is not stopped by a version it cannot keep (as document history does): the snapshot it restores is the record.
          await versions.keep(name, op, by).catch((error: unknown) => ctx.log.warn(`the version of skill '${name}' before a rollback could not be kept`, { error: String(error) }));
        }
      },
    });
    return { skill: skillHandlers(new SkillStore({ workspaceRoot: workspace.root, skillsDir, catalog, records, writer, versions, limits })) };
  },
});
