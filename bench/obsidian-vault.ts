/**
 * Import of a real-shaped Obsidian vault (issue 18 point 7), against a plain Markdown import of the same
 * files in the same run (the baseline: no front matter, links or attachments read):
 *
 *   node /work/shared/bench/corpus.mjs /tmp/c100k 100000
 *   node dist/bench/obsidian-vault.js /tmp/c100k [NOTES=5000] [WORK_DIR]
 *
 * The vault is written from the corpus's paragraphs (400-character prose, some CJK): NOTES notes of 5-40
 * paragraphs in nested folders, 60% with front matter (tags, dates, aliases, a key with a space), about
 * six wiki links per note (aliases, headings, embeds, 2% to notes that do not exist, 1% to blocks),
 * Obsidian tags, a callout in one note of five, and 200 images linked from one note of ten. Printed:
 * seconds and notes/s of both imports and their ratio, the import's report (what was changed and what
 * could not be mapped), the export as Obsidian, the re-import of the export, and the load average.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel } from '../core/kernel.js';
import { silentLogger } from '../core/log.js';

const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

function paragraphsOf(corpus: string, wanted: number): string[] {
  const out: string[] = [];
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= wanted) return;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.md')) out.push(...readFileSync(path, 'utf8').split('\n\n').filter((p) => !p.startsWith('#') && p.trim() !== ''));
    }
  };
  visit(corpus);
  if (out.length === 0) throw new Error(`no paragraphs under ${corpus}: run corpus.mjs first`);
  return out;
}

/** A deterministic vault: the same notes, links and files on every run. */
function writeVault(folder: string, notes: number, paragraphs: string[]): { bytes: number } {
  let seed = 42;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, '.obsidian'), { recursive: true });
  mkdirSync(join(folder, 'attachments'));
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  for (let i = 0; i < 200; i++) writeFileSync(join(folder, 'attachments', `image-${i}.png`), Buffer.concat([png, Buffer.from(String(i))]));
  const names = Array.from({ length: notes }, (_, i) => `Note ${i} ${paragraphs[i % paragraphs.length]!.split(' ').slice(0, 2).join(' ').replace(/[^\p{L}\p{N} ]/gu, '')}`.trim());
  const folders = ['', 'Projects', 'Projects/Active', 'Areas', 'Resources/Reading', 'Daily', 'Archive/2023'];
  for (const f of folders) mkdirSync(join(folder, f), { recursive: true });
  let bytes = 0;
  let p = 0;
  for (let i = 0; i < notes; i++) {
    const parts: string[] = [];
    if (random() < 0.6) parts.push(`---\ntags: [${pick(['work', 'reading', 'idea'])}, area/${pick(['home', 'job'])}]\ncreated: 2024-0${1 + (i % 9)}-1${i % 10}\naliases: [N${i}]\nDue Date: 2024-12-0${1 + (i % 9)}\nstatus: ${pick(['draft', 'done'])}\n---`);
    const count = 5 + Math.floor(random() * 36);
    for (let k = 0; k < count; k++) {
      let text = paragraphs[p++ % paragraphs.length]!;
      if (k === 2) parts.push(`## Section ${i}`);
      if (random() < 0.15) {
        const roll = random();
        const target = names[Math.floor(random() * notes)]!;
        const link = roll < 0.02 ? `[[Missing ${i}]]` : roll < 0.03 ? `[[${target}#^block${k}]]` : roll < 0.2 ? `[[${target}|an alias]]` : roll < 0.35 ? `[[${target}#Section ${names.indexOf(target)}]]` : `[[${target}]]`;
        text += ` See ${link}.`;
      }
      if (random() < 0.1) text += ` #${pick(['inbox', 'later', 'topic/sub', '读书'])}`;
      parts.push(text);
    }
    if (i % 5 === 0) parts.push(`> [!${pick(['info', 'tip', 'warning'])}]- A callout\n> ${paragraphs[p++ % paragraphs.length]}`);
    if (i % 10 === 0) parts.push(`![[image-${i % 200}.png]]`);
    if (i % 20 === 0) parts.push(`![[${names[(i + 1) % notes]}]]`);
    const text = `${parts.join('\n\n')}\n`;
    bytes += Buffer.byteLength(text);
    writeFileSync(join(folder, folders[i % folders.length]!, `${names[i]}.md`), text);
  }
  return { bytes };
}

async function main(): Promise<void> {
  const [corpus, notesArg, workArg] = process.argv.slice(2);
  if (!corpus) throw new Error('usage: node dist/bench/obsidian-vault.js <corpus folder> [NOTES] [WORK_DIR]');
  const notes = Number(notesArg ?? 5000);
  const work = workArg ?? join(tmpdir(), 'quire-obsidian-bench');
  const vault = join(work, 'vault');
  const { bytes } = writeVault(vault, notes, paragraphsOf(corpus, notes * 25));
  rmSync(join(work, 'ws'), { recursive: true, force: true });
  const kernel = await Kernel.boot({ workspace: join(work, 'ws'), logger: silentLogger, config: { actions: { timeoutMs: 3_600_000 }, plugins: { blocks: { config: { watch: false, welcome: false } } } } });
  const person = { kind: 'person' as const, name: 'bench', role: 'admin' as const };
  const call = async (target: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: person });
    if (outcome.status !== 'ok') throw new Error('unexpected confirmation');
    return outcome.value as Record<string, unknown>;
  };
  const timed = async (label: string, input: Record<string, unknown>): Promise<{ seconds: number; result: Record<string, unknown> }> => {
    const notebook = await call('notebook_create', { name: label }) as { id: string };
    const started = performance.now();
    const result = await call('import_markdown', { notebook: notebook.id, ...input });
    return { seconds: (performance.now() - started) / 1000, result: { ...result, notebook: notebook.id } };
  };
  try {
    console.log(`vault: ${notes} notes, ${(bytes / 1e6).toFixed(1)} MB of Markdown, 200 images; load ${load()}`);
    const plain = await timed('plain', { path: vault, flavor: 'markdown' });
    const obsidian = await timed('obsidian', { path: vault });
    console.log(`import as plain Markdown (baseline): ${plain.seconds.toFixed(2)} s, ${(notes / plain.seconds).toFixed(0)} notes/s, ${plain.result.blocks} blocks`);
    console.log(`import as Obsidian:                  ${obsidian.seconds.toFixed(2)} s, ${(notes / obsidian.seconds).toFixed(0)} notes/s, ${obsidian.result.blocks} blocks; ${(obsidian.seconds / plain.seconds).toFixed(2)}× the baseline`);
    const report = obsidian.result.obsidian as Record<string, unknown> & { unresolved: unknown[]; approximated: unknown[]; problems: unknown[] };
    console.log(`report: ${JSON.stringify({ ...report, unresolved: report.unresolved.slice(0, 2), approximated: report.approximated.slice(0, 2), problems: report.problems.slice(0, 2) })}`);
    const out = join(work, 'export');
    rmSync(out, { recursive: true, force: true });
    let started = performance.now();
    const exported = await call('export_markdown', { id: obsidian.result.notebook, folder: out, flavor: 'obsidian' });
    console.log(`export as Obsidian: ${((performance.now() - started) / 1000).toFixed(2)} s, ${exported.files} files, ${JSON.stringify(exported.obsidian)}`);
    started = performance.now();
    const again = await timed('again', { path: out });
    console.log(`re-import of the export: ${again.seconds.toFixed(2)} s, ${again.result.blocks} blocks (first import: ${obsidian.result.blocks}); load ${load()}`);
  } finally {
    await kernel.close();
  }
}

await main();
