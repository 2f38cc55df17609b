/**
 * Kills under concurrent writes (issue 13, "kills survived"): `quire serve` over loopback, clients
 * appending, updating and deleting blocks and creating documents, the server SIGKILLed at a random
 * moment; then started again (which recovers: the write journal replayed, the stale lock taken over,
 * temporary files swept), checked over HTTP, stopped cleanly, and checked on disk. Each kill must keep
 * every acknowledged change: an acknowledged append or document is in its file, an acknowledged delete
 * is not, an updated block holds its last acknowledged text or the one still in flight at the kill.
 * The index after the recovery must equal a rebuild from the files, report no problem, and no
 * temporary file or journal segment may be left. Used by bench/kill-writes.ts (many kills, figures)
 * and by a test (a few kills, in CI).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export interface KillOptions {
  /** The built CLI (dist/core/cli/main.js). */
  cli: string;
  /** An empty folder for the workspace. */
  folder: string;
  kills: number;
  clients: number;
  documents: number;
  /** The kill comes this long after the clients start, at random in [min, max]. */
  killAfterMs: [number, number];
  seed: number;
  /** Called between a kill and the restart (a copy kept to look at, or a control that damages a file). */
  afterKill?: (workspace: string, kill: number) => Promise<void>;
  /** Said as each cycle ends. */
  progress?: (line: string) => void;
}

export interface KillReport {
  kills: number;
  /** Changes acknowledged before the kills, checked after each recovery. */
  acknowledged: { appends: number; updates: number; deletes: number; documents: number };
  /** Each a sentence naming what was lost or wrong, with the kill it followed; empty when all held. */
  failures: string[];
  /** Milliseconds from a kill's restart to listening (recovery included). */
  restartMs: number[];
}

interface Server { child: ChildProcess; call: Caller; stop(signal: NodeJS.Signals): Promise<void> }
type Caller = (path: string, body: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;

/** A small seeded generator (mulberry32): a failing run is repeated with its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'note agent kernel block paragraph memory search index snapshot history 读书 写作 gate effect plugin'.split(' ');

function paragraph(next: () => number, marker: string): string {
  const words = [marker];
  let length = marker.length;
  while (length < 400) {
    const word = WORDS[Math.floor(next() * WORDS.length)]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

async function startServer(cli: string, workspace: string, token: string): Promise<Server & { listenMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--workspace', workspace, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve ended (${code}) before listening: ${out}${errors}`)));
  });
  const listenMs = performance.now() - started;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(url);
  const call: Caller = (path, body) => new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const request = httpRequest({ agent, hostname, port, method: 'POST', path: `/api/actions/${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        } catch (error) {
          reject(error as Error);
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    agent.destroy();
  };
  return { child, call, stop, listenMs };
}

/** What the clients were told, and what was in flight when the server died. */
interface Ledger {
  /** Block id → its document; removed when a delete of it is acknowledged. */
  appended: Map<string, string>;
  deleted: Set<string>;
  /** Blocks whose delete was sent: missing from their file is no failure. */
  mayBeGone: Set<string>;
  /** Block id → the texts' markers it may hold: the last acknowledged (its append's at first), then any sent after it. */
  updated: Map<string, string[]>;
  documents: Set<string>;
  counts: KillReport['acknowledged'];
}

/** One client's changes, one after another, until the server stops answering. */
async function client(server: Server, ledger: Ledger, notebook: string, doc: string, name: string, next: () => number, failures: string[]): Promise<void> {
  const mine: string[] = [];
  // An answer other than 200 from a live server is a failure of its own: every change here is valid.
  const refused = (what: string, answer: { status: number; body: Record<string, unknown> }): void => {
    failures.push(`${name}: ${what} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
  };
  for (let n = 0; ; n++) {
    const choice = next();
    try {
      if (choice < 0.6 || mine.length < 3) {
        const answer = await server.call('blocks/block/append', { parentId: doc, markdown: paragraph(next, `a-${name}-${n}`) });
        if (answer.status !== 200) return refused('an append', answer);
        const id = (answer.body.result as { ids: string[] }).ids[0]!;
        ledger.appended.set(id, doc);
        ledger.updated.set(id, [`a-${name}-${n}`]);
        mine.push(id);
        ledger.counts.appends++;
      } else if (choice < 0.85) {
        const id = mine[mine.length - 1 - Math.floor(next() * Math.min(3, mine.length))]!;
        const marker = `u-${name}-${n}`;
        const markers = ledger.updated.get(id)!;
        markers.push(marker);
        ledger.updated.set(id, markers);
        const answer = await server.call('blocks/block/update', { id, markdown: paragraph(next, marker) });
        if (answer.status !== 200) return refused('an update', answer);
        // Acknowledged: the earlier texts can no longer be what the block holds.
        ledger.updated.set(id, markers.slice(markers.indexOf(marker)));
        ledger.counts.updates++;
      } else if (choice < 0.95) {
        const id = mine.shift()!;
        // In flight at a kill, the delete may have happened or not.
        ledger.mayBeGone.add(id);
        const answer = await server.call('blocks/block/delete', { id });
        if (answer.status !== 200) return refused('a delete', answer);
        ledger.appended.delete(id);
        ledger.updated.delete(id);
        ledger.deleted.add(id);
        ledger.counts.deletes++;
      } else {
        const answer = await server.call('blocks/document/create', { notebook, title: `Made by ${name} ${n}`, markdown: paragraph(next, `d-${name}-${n}`) });
        if (answer.status !== 200) return refused('a document create', answer);
        ledger.documents.add((answer.body.result as { id: string }).id);
        ledger.counts.documents++;
      }
    } catch {
      // The connection died with the server: what was in flight may or may not have happened.
      return;
    }
  }
}

/** Every block of a document file, by id, with its text. */
function blocksOf(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (block: { id: string; content?: string; children?: unknown[] }): void => {
    found.set(block.id, block.content ?? '');
    for (const child of block.children ?? []) visit(child as typeof block);
  };
  visit(JSON.parse(text) as { id: string });
  return found;
}

function dumpIndex(workspace: string): string {
  const db = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
  try {
    const rows = ['blocks', 'documents', 'tags', 'refs', 'attributes'].map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()));
    return createHash('sha256').update(rows.join('\n')).digest('hex');
  } finally {
    db.close();
  }
}

async function filesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** What the files say after a recovery and a clean stop, against what was acknowledged. */
async function checkFiles(workspace: string, notebook: string, ledger: Ledger, kill: number, failures: string[]): Promise<void> {
  const files = (await filesBelow(join(workspace, 'data', notebook))).filter((path) => path.endsWith('.json'));
  const blocks = new Map<string, string>();
  const docs = new Set<string>();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    try {
      for (const [id, content] of blocksOf(text)) blocks.set(id, content);
      docs.add(JSON.parse(text).id as string);
    } catch {
      failures.push(`kill ${kill}: ${file} is not whole JSON`);
    }
  }
  for (const [id, doc] of ledger.appended) if (!blocks.has(id) && !ledger.mayBeGone.has(id)) failures.push(`kill ${kill}: acknowledged block ${id} of ${doc} is missing`);
  for (const id of ledger.deleted) if (blocks.has(id)) failures.push(`kill ${kill}: block ${id}, whose delete was acknowledged, is back`);
  for (const [id, markers] of ledger.updated) {
    const content = blocks.get(id);
    if (content !== undefined && !markers.some((marker) => content.startsWith(marker))) failures.push(`kill ${kill}: block ${id} holds '${content.slice(0, 20)}…', not its last acknowledged text (${markers[0]})`);
  }
  for (const id of ledger.documents) if (!docs.has(id)) failures.push(`kill ${kill}: acknowledged document ${id} is missing`);
  const leftovers = (await filesBelow(join(workspace, 'data'))).filter((path) => path.endsWith('.tmp'));
  if (leftovers.length > 0) failures.push(`kill ${kill}: temporary files left after a start and a clean stop: ${leftovers.join(', ')}`);
  const segments = await filesBelow(join(workspace, '.quire', 'journal'));
  if (segments.length > 0) failures.push(`kill ${kill}: write journal segments left after a clean stop: ${segments.join(', ')}`);
}

export async function killCycles(options: KillOptions): Promise<KillReport> {
  const next = random(options.seed);
  const workspace = join(options.folder, 'ws');
  const token = `qk_${randomBytes(24).toString('base64url')}`;
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'quire.json'), JSON.stringify({
    auth: { tokens: [{ name: 'kills', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] },
    plugins: { blocks: { config: { welcome: false } } },
  }));
  const ledger: Ledger = { appended: new Map(), deleted: new Set(), mayBeGone: new Set(), updated: new Map(), documents: new Set(), counts: { appends: 0, updates: 0, deletes: 0, documents: 0 } };
  const failures: string[] = [];
  const restartMs: number[] = [];
  let server = await startServer(options.cli, workspace, token);
  const ok = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const answer = await server.call(path, body);
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    return answer.body.result as Record<string, unknown>;
  };
  const notebook = (await ok('blocks/notebook/create', { name: 'Kills' })).id as string;
  const docs: string[] = [];
  for (let d = 0; d < options.documents; d++) {
    const id = (await ok('blocks/document/create', { notebook, title: `Document ${d}`, markdown: Array.from({ length: 20 }, (_, i) => paragraph(next, `p-${d}-${i}`)).join('\n\n') })).id as string;
    docs.push(id);
    ledger.documents.add(id);
    // Its first blocks are acknowledged with it, and checked as the appended ones are.
    const { children } = (await ok('blocks/block/get_children', { id })) as { children: { id: string }[] };
    children.forEach((child, i) => {
      ledger.appended.set(child.id, id);
      ledger.updated.set(child.id, [`p-${d}-${i}`]);
    });
  }
  try {
    for (let kill = 1; kill <= options.kills; kill++) {
      const running = Array.from({ length: options.clients }, (_, c) => client(server, ledger, notebook, docs[c % docs.length]!, `k${kill}c${c}`, random(options.seed + kill * 1000 + c), failures));
      const [min, max] = options.killAfterMs;
      await new Promise((resolve) => setTimeout(resolve, min + next() * (max - min)));
      await server.stop('SIGKILL');
      await Promise.all(running);
      await options.afterKill?.(workspace, kill);
      // The start after the kill recovers; then the workspace is checked through the kernel and on disk.
      server = await startServer(options.cli, workspace, token);
      restartMs.push(server.listenMs);
      const { problems } = (await ok('blocks/index/problems', {})) as { problems: unknown[] };
      if (problems.length > 0) failures.push(`kill ${kill}: the index reports problems after the restart: ${JSON.stringify(problems).slice(0, 300)}`);
      await server.stop('SIGTERM');
      await checkFiles(workspace, notebook, ledger, kill, failures);
      const live = dumpIndex(workspace);
      const rebuild = spawn(process.execPath, [options.cli, 'index', 'rebuild', '--workspace', workspace], { stdio: 'ignore' });
      const code = await new Promise<number | null>((resolve) => rebuild.on('exit', resolve));
      if (code !== 0) failures.push(`kill ${kill}: index rebuild exited ${code}`);
      else if (dumpIndex(workspace) !== live) failures.push(`kill ${kill}: the index after the recovery differs from a rebuild of the files`);
      options.progress?.(`kill ${kill}: ${JSON.stringify(ledger.counts)} acknowledged so far, restart ${server.listenMs.toFixed(0)} ms, failures so far ${failures.length}`);
      if (kill < options.kills) server = await startServer(options.cli, workspace, token);
    }
  } finally {
    await server.stop('SIGKILL');
  }
  return { kills: options.kills, acknowledged: { ...ledger.counts }, failures, restartMs };
}
