/**
 * Snapshot cost as the history grows (issue 14 point 1), on documents as snapshot-growth.mjs writes them:
 * - the first snapshot of DOCS documents, this build (B) and another build (A, e.g. the commit before)
 *   alternating on the same data, each into a fresh repository;
 * - a snapshot after 10 changed documents in a repository holding 2 snapshots (S) and one holding
 *   SNAPSHOTS (L), alternating, over data folders of their own; then the first snapshot a new process
 *   takes on L (it reads the index and the newest record).
 *
 *   npm run build && node dist/bench/snapshot-history.js [A_DIST]     # A_DIST: another checkout's dist/
 *   env BENCH_DOCS=10000 BENCH_SNAPSHOTS=500 BENCH_ROUNDS=9 BENCH_DOC_BYTES=2000
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { IntentJournal } from '../core/fs/intent-journal.js';
import type { FileChange } from '../plugins/snapshots/file-change.js';
import { SnapshotRepo } from '../plugins/snapshots/snapshot-repo.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 10_000);
const SNAPSHOTS = Number(process.env.BENCH_SNAPSHOTS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const BYTES = Number(process.env.BENCH_DOC_BYTES ?? 2000);
const baseDist = process.argv[2];

interface Creates { create(memo: string, origin: string): Promise<unknown> }
type RepoClass = new (repoDir: string, dataDir: string, journal: IntentJournal<FileChange>) => Creates;

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => value.toFixed(0);

const text = (i: number, version: number) => JSON.stringify({ id: `doc-${i}`, type: 'document', content: `Doc ${i}`, attrs: {}, children: [{ id: `p-${i}`, type: 'paragraph', content: `v${version} `.padEnd(BYTES, `w${i} `), attrs: {} }] }, null, 2);

function notes(folder: string): { change(step: number): void } {
  const file = (i: number) => join(folder, `nb${Math.floor(i / 1000)}`, `doc-${i}.json`);
  for (let i = 0; i < DOCS; i++) {
    if (i % 1000 === 0) mkdirSync(join(folder, `nb${Math.floor(i / 1000)}`), { recursive: true });
    writeFileSync(file(i), text(i, 0));
  }
  return {
    change(step: number) {
      for (let k = 0; k < 10; k++) {
        const i = (step * 131 + k * 997) % DOCS;
        writeFileSync(file(i), text(i, step));
      }
    },
  };
}

/** Wall time; the process's CPU time (user + system) of the last call is kept in `lastCpu`, a fairer figure on a loaded machine. */
let lastCpu = 0;
async function timed(work: () => Promise<unknown>): Promise<number> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  lastCpu = (used.user + used.system) / 1000;
  return performance.now() - started;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'quire-bench-snaphistory-'));
  const journal = new IntentJournal<FileChange>(join(root, 'journal'));
  try {
    console.log(`${DOCS} documents x ${BYTES} B; node ${process.version}; load ${load()}`);
    const builds: [string, RepoClass][] = [['B (this build)', SnapshotRepo]];
    if (baseDist) {
      const module = await import(pathToFileURL(join(resolve(baseDist), 'plugins/snapshots/snapshot-repo.js')).href) as { SnapshotRepo: RepoClass };
      builds.unshift(['A (' + baseDist + ')', module.SnapshotRepo]);
    }
    // The first snapshot, the builds alternating on the same files.
    const data = join(root, 'first');
    notes(data);
    const firsts = new Map<string, number[]>(builds.map(([name]) => [name, []]));
    for (let round = 0; round < 2; round++) {
      for (const [name, Repo] of builds) {
        const repoDir = join(root, `repo-first-${round}-${firsts.get(name)!.length}-${name[0]}`);
        const took = await timed(() => new Repo(repoDir, data, journal).create('first', 'person:bench'));
        firsts.get(name)!.push(took);
        console.log(`first snapshot, ${name}: ${ms(took)} ms (CPU ${ms(lastCpu)} ms; load ${load()})`);
        rmSync(repoDir, { recursive: true, force: true });
      }
    }
    if (baseDist) {
      // Best of two each: a load spike on a shared machine only ever adds time.
      const bestA = Math.min(...firsts.get(builds[0]![0])!);
      const bestB = Math.min(...firsts.get(builds[1]![0])!);
      console.log(`first snapshot: A ${ms(bestA)} ms, B ${ms(bestB)} ms (best of 2 each): B is ${(bestA / bestB).toFixed(1)}x faster`);
    }
    rmSync(data, { recursive: true, force: true });

    // A short history (S) against a long one (L), this build.
    const small = notes(join(root, 'small'));
    const large = notes(join(root, 'large'));
    const repoS = new SnapshotRepo(join(root, 'repo-small'), join(root, 'small'), journal);
    const repoL = new SnapshotRepo(join(root, 'repo-large'), join(root, 'large'), journal);
    await repoS.create('first', 'person:bench');
    small.change(1);
    await repoS.create('step 1', 'person:bench');
    const built = performance.now();
    await repoL.create('first', 'person:bench');
    for (let step = 1; step < SNAPSHOTS; step++) {
      large.change(step);
      await repoL.create(`step ${step}`, 'person:bench');
      if (step % 100 === 0) console.log(`  L: ${step + 1} snapshots (${ms((performance.now() - built) / 1000)} s, load ${load()})`);
    }
    const timesS: number[] = [];
    const timesL: number[] = [];
    const cpuS: number[] = [];
    const cpuL: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      small.change(1000 + round);
      timesS.push(await timed(() => repoS.create(`round ${round}`, 'person:bench')));
      cpuS.push(lastCpu);
      large.change(1000 + round);
      timesL.push(await timed(() => repoL.create(`round ${round}`, 'person:bench')));
      cpuL.push(lastCpu);
    }
    console.log(`create after 10 changed, ${ROUNDS} rounds alternating (load ${load()}):`);
    console.log(`  S (2 to ${2 + ROUNDS - 1} snapshots): median ${ms(median(timesS))} ms [${timesS.map(ms).join(' ')}]`);
    console.log(`  L (${SNAPSHOTS} to ${SNAPSHOTS + ROUNDS - 1} snapshots): median ${ms(median(timesL))} ms [${timesL.map(ms).join(' ')}]`);
    console.log(`  L / S: ${(median(timesL) / median(timesS)).toFixed(2)} wall, ${(median(cpuL) / median(cpuS)).toFixed(2)} CPU (median CPU S ${ms(median(cpuS))} ms, L ${ms(median(cpuL))} ms)`);
    const listL = await timed(() => repoL.list());
    large.change(5000);
    const fresh = new SnapshotRepo(join(root, 'repo-large'), join(root, 'large'), journal);
    const firstInProcess = await timed(() => fresh.create('new process', 'person:bench'));
    console.log(`L: list() ${ms(listL)} ms; a new process's first snapshot (index + newest record read) ${ms(firstInProcess)} ms; load ${load()}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
