/**
 * What the skills listing costs each turn: SkillCatalog.promptListing() (read every skill folder, stat
 * and reparse only changed SKILL.md files, count tokens, fit the budget) over 0, 20 and 100 skills of
 * five files each, cold (first read) and warm, rounds alternating; warm both with each folder walked
 * again on every read (A: the first commit's rule) and with a walk reused while its folders' times hold (B).
 * Prints load (uptime) too.
 * Run: npm run build && node dist/bench/skills-listing.js
 */
import { execSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../core/log.js';
import { SkillCatalog } from '../plugins/skills/skill-catalog.js';
import { limitsFrom } from '../plugins/skills/skill-limits.js';
import { SkillRecords } from '../plugins/skills/skill-records.js';

const ROUNDS = 7;
const CALLS = 50;

async function makeSkills(root: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = `skill-${String(i).padStart(3, '0')}`;
    const folder = join(root, name);
    await mkdir(join(folder, 'scripts'), { recursive: true });
    await writeFile(join(folder, 'SKILL.md'), `---\nname: ${name}\ndescription: Use when the person asks for report number ${i}; it covers layout, sources and the checks before sending.\nlicense: MIT\n---\n\n# Report ${i}\n\n${'Write the summary first, then the details. '.repeat(60)}\n`);
    for (const file of ['reference.md', 'template.md', 'examples.md']) await writeFile(join(folder, file), `# ${file}\n${'text '.repeat(400)}\n`);
    await writeFile(join(folder, 'scripts', 'build.py'), '#!/usr/bin/env python3\nprint("never run")\n');
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'quire-skills-bench-'));
  try {
    const sizes = [0, 20, 100];
    const catalogs = new Map<string, SkillCatalog>();
    // The tokenizer's ranks and the YAML parser load on first use: paid here, not by the first size measured.
    const warmRoot = join(base, 'warm');
    await makeSkills(warmRoot, 1);
    await new SkillCatalog([{ path: warmRoot, writable: true }], limitsFrom({}), await SkillRecords.open(join(base, 'warm.json'), silentLogger), silentLogger).promptListing();
    for (const size of sizes) {
      const root = join(base, `s${size}`);
      await mkdir(root, { recursive: true });
      await makeSkills(root, size);
      for (const reuse of [false, true]) {
        const records = await SkillRecords.open(join(base, `records-${size}-${reuse}.json`), silentLogger);
        catalogs.set(`${size}:${reuse}`, new SkillCatalog([{ path: root, writable: true }], limitsFrom({}), records, silentLogger, { reuseScans: reuse }));
      }
    }
    const cold = new Map<number, number>();
    for (const size of sizes) {
      const start = process.hrtime.bigint();
      const listed = await catalogs.get(`${size}:true`)!.promptListing();
      cold.set(size, Number(process.hrtime.bigint() - start) / 1e6);
      if (size > 0 && listed.length === 0) throw new Error('nothing listed');
      await catalogs.get(`${size}:false`)!.promptListing();
    }
    const warm = new Map<string, number[]>([...catalogs.keys()].map((key) => [key, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const key of catalogs.keys()) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await catalogs.get(key)!.promptListing();
        warm.get(key)!.push(Number(process.hrtime.bigint() - start) / 1e6 / CALLS);
      }
    }
    console.log(`load: ${execSync('uptime').toString().trim()}`);
    for (const size of sizes) {
      const a = median(warm.get(`${size}:false`)!);
      const b = median(warm.get(`${size}:true`)!);
      console.log(`${String(size).padStart(3)} skills x 5 files: cold ${cold.get(size)!.toFixed(1)} ms; warm per listing A (walk every read) ${a.toFixed(2)} ms, B (walk reused) ${b.toFixed(2)} ms, A/B ${(a / b).toFixed(1)}x (median of ${ROUNDS} rounds of ${CALLS})`);
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

await main();
