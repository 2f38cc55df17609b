import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Logger, LogFields } from '../../../core/log.js';
import { SkillCatalog } from '../../../plugins/skills/skill-catalog.js';
import { limitsFrom } from '../../../plugins/skills/skill-limits.js';
import { SkillRecords } from '../../../plugins/skills/skill-records.js';
import { useHarness } from '../../helpers/harness.js';
import { skillMd, writeTree } from './skills-harness.js';

function capturingLogger(lines: { message: string; fields?: LogFields }[]): Logger {
  const logger: Logger = {
    debug: () => undefined, info: () => undefined, error: () => undefined,
    warn: (message, fields) => { lines.push({ message, ...(fields ? { fields } : {}) }); },
    child: () => logger,
  };
  return logger;
}

describe('the skill catalog', () => {
  const { tempDir } = useHarness();

  it('logs a broken skill once with its path and problem, and again only when its problem changes', async () => {
    const dir = await tempDir();
    const lines: { message: string; fields?: LogFields }[] = [];
    const log = capturingLogger(lines);
    await writeTree(join(dir, 'skills'), { 'ok/SKILL.md': skillMd('name: ok\ndescription: Fine.'), 'bad/SKILL.md': skillMd('name: bad') });
    const catalog = new SkillCatalog([{ path: join(dir, 'skills'), writable: true }], limitsFrom({}), await SkillRecords.open(join(dir, 'skills.json'), log), log);
    await catalog.read();
    await catalog.read();
    expect(lines).toEqual([{ message: expect.stringContaining('has no description'), fields: { path: join(dir, 'skills', 'bad'), problem: 'DESCRIPTION_MISSING' } }]);
    await writeTree(join(dir, 'skills'), { 'bad/SKILL.md': skillMd('name: bad\ndescription: ""') });
    await catalog.read();
    expect(lines.map((line) => line.fields?.problem)).toEqual(['DESCRIPTION_MISSING', 'DESCRIPTION_EMPTY']);
  });
});
