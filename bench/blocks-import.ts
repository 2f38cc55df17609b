/**
 * Import and index rebuild on the realistic corpus (issue 14 point 4), against the raw SQLite baseline
 * measured in the same process right after: the same `blocks` rows (same table and indexes) inserted in
 * one transaction, then an FTS5 table over them filled by its 'rebuild' command.
 *
 *   node /work/shared/bench/corpus.mjs /tmp/c100k 100000
 *   node dist/bench/blocks-import.js /tmp/c100k [OTHER_PROJECT_DIR] [WORK_DIR]
 *
 * Each measurement runs in a child process of its own (a fresh kernel: import of the corpus's notebooks
 * one after the other, `index rebuild`, the raw baseline). With OTHER_PROJECT_DIR (a built checkout, e.g.
 * the commit before), the two alternate, ROUNDS times (default 2), so that their ratio holds on a shared
 * machine. Printed: Markdown MB/s and blocks/s of the import actions, CPU of the main thread and of the
 * others (the parse workers, libuv and SQLite) against wall time, rebuild seconds and its ratio to the
 * raw baseline, and the load average.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

interface Figures {
  project: string;
  blocks: number;
  megabytes: number;
  importSeconds: number;
  importCpuMain: number;
  importCpuOther: number;
  rebuildSeconds: number;
  rebuildCpuMain: number;
  rebuildCpuOther: number;
  rawSeconds: number;
  /** CPU seconds of the raw baseline (one thread): on a loaded machine, compare it with the rebuild's CPU. */
  rawCpu: number;
  load: string;
}

const HERE = fileURLToPath(import.meta.url);
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

/** CPU seconds of one thread of this process (utime + stime from /proc; Linux only). */
function threadCpu(tid: number): number {
  try {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function processCpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function markdownFiles(folder: string, into: string[] = []): string[] {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) markdownFiles(path, into);
    else if (entry.name.endsWith('.md')) into.push(path);
  }
  return into;
}

/** One measurement, in this (child) process, of the project built at `project`. */
async function measure(project: string, corpus: string, work: string): Promise<Figures> {
  const built = (path: string): string => pathToFileURL(join(project, 'dist', path)).href;
  const { Kernel } = await import(built('core/kernel.js')) as typeof import('../core/kernel.js');
  const { silentLogger } = await import(built('core/log.js')) as typeof import('../core/log.js');
  rmSync(work, { recursive: true, force: true });
  const config = {
    actions: { timeoutMs: 3_600_000 }, pluginHost: { activationTimeoutMs: 600_000 },
    plugins: { blocks: { config: { watch: false, welcome: false } } },
  };
  const kernel = await Kernel.boot({ workspace: join(work, 'ws'), config, logger: silentLogger });
  const person = { kind: 'person' as const, name: 'bench', role: 'admin' as const };
  const call = async (target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: person });
    if (outcome.status !== 'ok') throw new Error('unexpected confirmation');
    return outcome.value as Record<string, unknown>;
  };
  try {
    const notebooks = readdirSync(corpus).filter((name) => /^nb\d+$/.test(name)).sort();
    let blocks = 0;
    let bytes = 0;
    let importSeconds = 0;
    let importCpu = 0;
    let importCpuMain = 0;
    for (const name of notebooks) {
      const notebook = await call('notebook_create', { name });
      bytes += markdownFiles(join(corpus, name)).reduce((sum, path) => sum + statSync(path).size, 0);
      const [cpu, main, started] = [processCpu(), threadCpu(process.pid), performance.now()];
      const imported = await call('import_markdown', { notebook: notebook.id, path: resolve(corpus, name) });
      importSeconds += (performance.now() - started) / 1000;
      importCpu += processCpu() - cpu;
      importCpuMain += threadCpu(process.pid) - main;
      blocks += Number(imported.blocks);
    }
    const [cpu, main, started] = [processCpu(), threadCpu(process.pid), performance.now()];
    await call('index_rebuild', {});
    const rebuildSeconds = (performance.now() - started) / 1000;
    const rebuildCpu = processCpu() - cpu;
    const rebuildCpuMain = threadCpu(process.pid) - main;
    const { seconds: rawSeconds, cpu: rawCpu } = rawBaseline(join(kernel.workspace.indexDir, 'quire.db'), join(work, 'raw.db'));
    return {
      project, blocks, megabytes: bytes / 1e6, importSeconds, importCpuMain, importCpuOther: importCpu - importCpuMain,
      rebuildSeconds, rebuildCpuMain, rebuildCpuOther: rebuildCpu - rebuildCpuMain, rawSeconds, rawCpu, load: load(),
    };
  } finally {
    await kernel.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * SQLite alone: the index's `blocks` rows, read into memory first, inserted into a fresh database with
 * the same table and indexes in one transaction, then an external-content FTS5 table (text and the
 * filter columns, the index's tokenizer) filled by 'rebuild'. Seconds and CPU seconds of the insert and the rebuild.
 */
function rawBaseline(indexFile: string, rawFile: string): { seconds: number; cpu: number } {
  const index = new Database(indexFile, { readonly: true });
  const ddl = index.prepare("SELECT sql FROM sqlite_master WHERE tbl_name = 'blocks' AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC").pluck().all() as string[];
  const rows = index.prepare('SELECT * FROM blocks ORDER BY rowid').raw().all() as unknown[][];
  const columns = (index.prepare('SELECT * FROM blocks LIMIT 1').columns()).map((column) => column.name);
  index.close();
  const raw = new Database(rawFile);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  for (const sql of ddl) raw.exec(sql);
  const insert = raw.prepare(`INSERT INTO blocks (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  const [started, cpu] = [performance.now(), threadCpu(process.pid)];
  raw.transaction(() => {
    for (const row of rows) insert.run(...row);
    raw.exec("CREATE VIRTUAL TABLE raw_fts USING fts5(content, notebook, path, type, subtype, content = 'blocks', tokenize = 'unicode61 remove_diacritics 2')");
    raw.exec("INSERT INTO raw_fts (raw_fts) VALUES ('rebuild')");
  })();
  const seconds = (performance.now() - started) / 1000;
  const used = threadCpu(process.pid) - cpu;
  raw.close();
  return { seconds, cpu: used };
}

function describe(f: Figures): string {
  const name = f.project === process.cwd() ? '.' : f.project;
  return `${name}: ${f.blocks} blocks, ${f.megabytes.toFixed(1)} MB of Markdown\n`
    + `  import  ${f.importSeconds.toFixed(1)} s = ${(f.megabytes / f.importSeconds).toFixed(2)} MB/s, ${Math.round(f.blocks / f.importSeconds)} blocks/s; `
    + `CPU main ${f.importCpuMain.toFixed(1)} s + other threads ${f.importCpuOther.toFixed(1)} s = ${((f.importCpuMain + f.importCpuOther) / f.importSeconds).toFixed(2)} cores\n`
    + `  rebuild ${f.rebuildSeconds.toFixed(1)} s (CPU main ${f.rebuildCpuMain.toFixed(1)} + other ${f.rebuildCpuOther.toFixed(1)}), raw SQLite baseline ${f.rawSeconds.toFixed(1)} s (CPU ${f.rawCpu.toFixed(1)}): `
    + `rebuild / raw = ${(f.rebuildSeconds / f.rawSeconds).toFixed(2)}x wall, ${((f.rebuildCpuMain + f.rebuildCpuOther) / f.rawCpu).toFixed(2)}x CPU, `
    + `${(f.rebuildCpuMain / f.rawCpu).toFixed(2)}x main-thread CPU (the raw baseline is one thread); load ${f.load}`;
}

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === '--child') {
    const [project, corpus, work] = rest as [string, string, string];
    process.stdout.write(`${JSON.stringify(await measure(project, corpus, work))}\n`);
    return;
  }
  if (!first) throw new Error('usage: node dist/bench/blocks-import.js CORPUS_DIR [OTHER_PROJECT_DIR] [WORK_DIR]');
  const corpus = resolve(first);
  const self = resolve(HERE, '../../..');
  const projects = rest[0] ? [self, resolve(rest[0])] : [self];
  const work = resolve(rest[1] ?? join(tmpdir(), 'quire-bench-import'));
  mkdirSync(work, { recursive: true });
  const rounds = Number(process.env.ROUNDS ?? (projects.length > 1 ? 2 : 1));
  console.log(`node ${process.version}, ${cpus().length} cores, load ${load()}`);
  const results = new Map<string, Figures[]>(projects.map((project) => [project, []]));
  for (let round = 0; round < rounds; round++) {
    for (const project of round % 2 === 0 ? projects : [...projects].reverse()) {
      const child = spawnSync(process.execPath, [HERE, '--child', project, corpus, join(work, 'run')], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (child.status !== 0) throw new Error(`measurement of ${project} failed: ${child.stderr}`);
      const figures = JSON.parse(child.stdout.trim().split('\n').pop()!) as Figures;
      results.get(project)!.push(figures);
      console.log(`round ${round + 1} ${describe(figures)}`);
    }
  }
  if (projects.length > 1) {
    const median = (values: number[]): number => {
      const sorted = [...values].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    };
    const [a, b] = projects.map((project) => results.get(project)!);
    const ratio = (pick: (f: Figures) => number): string => (median(b!.map(pick)) / median(a!.map(pick))).toFixed(2);
    console.log(`${projects[1]} / this checkout (medians): import time ${ratio((f) => f.importSeconds)}x, import CPU ${ratio((f) => f.importCpuMain + f.importCpuOther)}x, `
      + `import main-thread CPU ${ratio((f) => f.importCpuMain)}x, rebuild time ${ratio((f) => f.rebuildSeconds)}x, rebuild/raw ${ratio((f) => f.rebuildSeconds / f.rawSeconds)}x, `
      + `rebuild main-thread CPU / raw CPU ${ratio((f) => f.rebuildCpuMain / f.rawCpu)}x`);
  }
}

await main();
