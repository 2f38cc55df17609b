/**
 * Block update latency against its floor (issue 14, point 5): `quire serve` in a child process on
 * loopback, one document of 1,000 blocks made of the realistic corpus (../shared/bench/corpus.mjs,
 * paragraphs of about 400 characters), and in one run, alternating:
 *   A  a block update over HTTP (a corpus paragraph replacing a random block's text),
 *   B  a no-op action over HTTP: system/current_time (the reference of write-latency.mjs) and
 *      system/info (cheaper: current_time formats the local time with ICU, about 0.4 ms),
 *   C  one durable atomic write of that document's file (its current text, temporary file, fsync,
 *      rename, folder fsync) from this process, in the same folder, with the project's own functions.
 * Prints p50/p99 of each and A / (B + C), the target being at most 2.5. Then counts the fsyncs of the
 * server per update with strace attached to all its threads (when strace is installed), the history
 * versions written after the answers included.
 *   npm run build && node dist/bench/update-latency.js   (env: UPDATES=300 BLOCKS=1000 FSYNC_EDITS=40 PROF=<folder>)
 * QUIRE_SHARED_BENCH: the folder of corpus.mjs (default ../shared/bench beside the checkout).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeFileAtomic, writeFileAtomicSync } from '../core/fs/atomic-write.js';
import { serveChild } from './serve-child.js';

const UPDATES = Number(process.env.UPDATES ?? 300);
const BLOCKS = Number(process.env.BLOCKS ?? 1000);
const FSYNC_EDITS = Number(process.env.FSYNC_EDITS ?? 40);
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO, 'dist', 'core', 'cli', 'main.js');
const SHARED = process.env.QUIRE_SHARED_BENCH ?? join(REPO, '..', 'shared', 'bench');

const pct = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');
const f = (x: number, digits = 2): string => x.toFixed(digits);

/** Blocks of the shared corpus in document order (headings and paragraphs), as Markdown parts. */
async function corpusParts(count: number): Promise<string[]> {
  const { generate } = await import(pathToFileURL(join(SHARED, 'corpus.mjs')).href) as { generate(out: string, blocks: number, notebooks?: number): unknown };
  const folder = await mkdtemp(join(tmpdir(), 'quire-update-corpus-'));
  try {
    generate(folder, count + 200, 1);
    const files = (await readdir(folder, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
      .map((entry) => join(entry.parentPath, entry.name))
      .sort((a, b) => Number(/doc-(\d+)/.exec(a)![1]) - Number(/doc-(\d+)/.exec(b)![1]));
    const parts: string[] = [];
    for (const file of files) parts.push(...(await readFile(file, 'utf8')).trim().split('\n\n'));
    return parts;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function startServer(workspace: string, nodeArgs: string[]): Promise<{ child: ChildProcess; url: string }> {
  return serveChild(CLI, workspace, nodeArgs);
}

/** Counts system calls of every thread of a running process while `work` runs (strace -f -c -p). */
async function countSyscalls(pid: number, work: () => Promise<void>): Promise<Map<string, number> | undefined> {
  if (spawnSync('strace', ['-V'], { stdio: 'ignore' }).status !== 0) return undefined;
  const out = join(tmpdir(), `quire-strace-${randomBytes(4).toString('hex')}.txt`);
  const strace = spawn('strace', ['-f', '-c', '-o', out, '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2,mkdir,mkdirat', '-p', String(pid)], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 500)); // attached to every thread
  await work();
  strace.kill('SIGINT');
  await new Promise((resolve) => strace.on('exit', resolve));
  const counts = new Map<string, number>();
  for (const line of (await readFile(out, 'utf8').catch(() => '')).split('\n')) {
    const match = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (match && match[2] !== 'total') counts.set(match[2]!, Number(match[1]));
  }
  await rm(out, { force: true });
  return counts;
}

async function main(): Promise<void> {
  const parts = await corpusParts(BLOCKS);
  const root = await mkdtemp(join(tmpdir(), 'quire-update-'));
  const workspace = join(root, 'ws');
  const token = `qk_${randomBytes(24).toString('base64url')}`;
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'quire.json'), JSON.stringify({
    auth: { tokens: [{ name: 'bench', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] },
    plugins: { blocks: { config: { welcome: false, watch: false } } },
  }));
  const profile = process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF}`] : [];
  const { child: server, url } = await startServer(workspace, profile);
  const call = async (path: string, body: unknown): Promise<{ status: number; ms: number; body: Record<string, unknown> }> => {
    const started = performance.now();
    const response = await fetch(`${url}/api/actions/${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const parsed = (await response.json()) as Record<string, unknown>;
    return { status: response.status, ms: performance.now() - started, body: parsed };
  };
  const ok = (answer: { status: number; body: Record<string, unknown> }): Record<string, unknown> => {
    if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    return answer.body.result as Record<string, unknown>;
  };
  try {
    const notebook = ok(await call('blocks/notebook/create', { name: 'Bench' })).id as string;
    const markdown = parts.slice(0, BLOCKS - 1).join('\n\n');
    const docId = ok(await call('blocks/document/create', { notebook, title: 'Long document', markdown })).id as string;
    const document = ok(await call('blocks/document/get', { id: docId })).document as { children: { id: string }[] };
    const blockIds = document.children.map((block) => block.id);
    const docFile = join(workspace, 'data', notebook, `${docId}.json`);
    const text = await readFile(docFile, 'utf8');
    const floorFile = join(workspace, 'data', notebook, 'floor-write.json');
    console.log(`one document of ${blockIds.length + 1} blocks (the shared corpus), file ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB; load ${load()}`);

    let n = 0;
    const update = async (): Promise<number> => {
      n++;
      const answer = await call('blocks/block/update', { id: blockIds[(n * 7919) % blockIds.length], markdown: parts[BLOCKS + (n % 150)] });
      ok(answer);
      return answer.ms;
    };
    const timed = async (work: () => unknown): Promise<number> => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    for (let i = 0; i < 30; i++) {
      await update();
      await call('system/system/current_time', {});
      writeFileAtomicSync(floorFile, text);
    }
    const updates: number[] = [], noops: number[] = [], infos: number[] = [], syncWrites: number[] = [], asyncWrites: number[] = [];
    for (let i = 0; i < UPDATES; i++) {
      updates.push(await update());
      noops.push((await call('system/system/current_time', {})).ms);
      infos.push((await call('system/system/info', {})).ms);
      syncWrites.push(await timed(() => writeFileAtomicSync(floorFile, text)));
      asyncWrites.push(await timed(() => writeFileAtomic(floorFile, text)));
    }
    const write = Math.min(pct(syncWrites, 50), pct(asyncWrites, 50));
    const floor = pct(noops, 50) + write;
    const strictFloor = pct(infos, 50) + write;
    console.log(`${UPDATES} rounds, alternating; load ${load()}:`);
    console.log(`  A  block update over HTTP           p50 ${f(pct(updates, 50))} ms  p99 ${f(pct(updates, 99))} ms`);
    console.log(`  B  no-op action over HTTP           p50 ${f(pct(noops, 50))} ms  p99 ${f(pct(noops, 99))} ms (current_time); p50 ${f(pct(infos, 50))} ms p99 ${f(pct(infos, 99))} ms (info)`);
    console.log(`  C  durable atomic write of the file p50 ${f(pct(syncWrites, 50))} ms (synchronous calls), ${f(pct(asyncWrites, 50))} ms (asynchronous); p99 ${f(pct(syncWrites, 99))} / ${f(pct(asyncWrites, 99))} ms`);
    console.log(`  A / (B + C) = ${f(pct(updates, 50))} / (${f(pct(noops, 50))} + ${f(write)}) = ${f(pct(updates, 50) / floor)}  (target <= 2.5); with info as the no-op ${f(pct(updates, 50) / strictFloor)}`);

    const counts = await countSyscalls(server.pid!, async () => {
      for (let i = 0; i < FSYNC_EDITS; i++) await update();
      // Versions and audit heads written after the answers are counted too.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    });
    if (!counts) console.log('  (strace not installed: fsyncs not counted)');
    else {
      const per = (name: string) => f((counts.get(name) ?? 0) / FSYNC_EDITS);
      console.log(`  per update, every thread of the server (strace, ${FSYNC_EDITS} updates): fsync ${per('fsync')}, fdatasync ${per('fdatasync')}, rename ${per('rename')}, mkdir ${per('mkdir')}`);
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => { if (server.exitCode !== null) resolve(undefined); else server.on('exit', resolve); });
    await rm(root, { recursive: true, force: true });
  }
}

await main();
