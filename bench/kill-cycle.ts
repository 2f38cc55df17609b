/**
 * Kills under concurrent writes (issue 13, "kills survived"): `quire serve` over loopback, clients
 * appending, updating, deleting and moving blocks, creating, moving, renaming and removing documents, the server SIGKILLed at a random
 * moment; then started again (which recovers: the write journal replayed, the stale lock taken over,
 * temporary files swept), checked over HTTP, stopped cleanly, and checked on disk. Each kill must keep
 * every acknowledged change: a block or a document is where it was last acknowledged, with its last
 * acknowledged text or title (or those of the change in flight at the kill), an acknowledged delete or
 * removal stays gone, no block or document is in two files, a notebook removed meanwhile is there
 * whole or not at all, and so is a folder imported meanwhile (bench/kill-imports.ts).
 * The index after the recovery must equal a rebuild from the files, report no problem, and no
 * temporary file or journal segment may be left. Used by bench/kill-writes.ts (many kills, figures)
 * and by a test (a few kills, in CI).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFile, mkdir } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { paragraph, random, runClient, type Caller } from './kill-clients.js';
import { serveChild } from './serve-child.js';
import { checkFiles, checkNotebooks, newLedger, type Acknowledged, type Ledger } from './kill-ledger.js';
import { checkImport, importedSoFar, importToRun } from './kill-imports.js';

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
  /**
   * Held back past its moment (up to KILL_HOLD_MAX_MS more) until the changes acknowledged so far pass
   * this: a test that checks changes of every kind survived needs some of each to have been made, and
   * the rarer ones may not come in a short window on a loaded machine.
   */
  killOnceAcknowledged?: (counts: Acknowledged) => boolean;
  seed: number;
  /** Called between a kill and the restart (a copy kept to look at, or a control that damages a file). */
  afterKill?: (workspace: string, kill: number) => Promise<void>;
  /** Said as each cycle ends. */
  progress?: (line: string) => void;
}

export interface KillReport {
  kills: number;
  /** Changes acknowledged before the kills, checked after each recovery. */
  acknowledged: Acknowledged;
  /** Each a sentence naming what was lost or wrong, with the kill it followed; empty when all held. */
  failures: string[];
  /** Milliseconds from a kill's restart to listening (recovery included). */
  restartMs: number[];
  /** Kills that came while an import had written part of its documents (each undone at the restart, or a failure). */
  importsCut: number;
}

/** The longest a kill is held back for `killOnceAcknowledged`. */
const KILL_HOLD_MAX_MS = 10_000;

interface Server { child: ChildProcess; call: Caller; stop(signal: NodeJS.Signals): Promise<void> }

async function startServer(cli: string, workspace: string, token: string): Promise<Server & { listenMs: number }> {
  const started = performance.now();
  const { child, url } = await serveChild(cli, workspace);
  const listenMs = performance.now() - started;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(url);
  const call: Caller = (path, body, headers = {}) => new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const request = httpRequest({ agent, hostname, port, method: 'POST', path: `/api/actions/${path}`, headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (response) => {
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

function dumpIndex(workspace: string): string {
  const db = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
  try {
    const rows = ['blocks', 'documents', 'tags', 'refs', 'attributes'].map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()));
    return createHash('sha256').update(rows.join('\n')).digest('hex');
  } finally {
    db.close();
  }
}

/** A workspace with an admin token, a notebook and `count` documents of 20 paragraphs, in the ledger. */
async function prepare(options: KillOptions, ledger: Ledger, next: () => number): Promise<{ workspace: string; token: string; server: Server & { listenMs: number }; notebook: string; docs: string[] }> {
  const workspace = join(options.folder, 'ws');
  const token = `qk_${randomBytes(24).toString('base64url')}`;
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'quire.json'), JSON.stringify({
    auth: { tokens: [{ name: 'kills', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] },
    plugins: { blocks: { config: { welcome: false } } },
  }));
  const server = await startServer(options.cli, workspace, token);
  const ok = (path: string, body: unknown) => expectOk(server, path, body);
  const notebook = (await ok('blocks/notebook/create', { name: 'Kills' })).id as string;
  const docs: string[] = [];
  for (let d = 0; d < options.documents; d++) {
    const id = (await ok('blocks/document/create', { notebook, title: `Document ${d}`, markdown: Array.from({ length: 20 }, (_, i) => paragraph(next, `p-${d}-${i}`)).join('\n\n') })).id as string;
    docs.push(id);
    ledger.docParents.set(id, [null]);
    ledger.docTitles.set(id, [`Document ${d}`]);
    // Its first blocks are acknowledged with it, and checked as the appended ones are.
    const { children } = (await ok('blocks/block/get_children', { id })) as { children: { id: string }[] };
    children.forEach((child, i) => {
      ledger.blockDocs.set(child.id, [id]);
      ledger.blockTexts.set(child.id, [`p-${d}-${i}`]);
    });
  }
  return { workspace, token, server, notebook, docs };
}

async function expectOk(server: Server, path: string, body: unknown): Promise<Record<string, unknown>> {
  const answer = await server.call(path, body);
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body.result as Record<string, unknown>;
}

/**
 * A notebook of 4 documents, each with a child document, removed at a random moment while the clients
 * write (whether the kill comes before, during or after its removal is up to chance).
 */
async function notebookToRemove(server: Server, ledger: Ledger, kill: number, next: () => number, killing: { now: boolean }, failures: string[]): Promise<() => Promise<void>> {
  const notebook = (await expectOk(server, 'blocks/notebook/create', { name: `Scratch ${kill}` })).id as string;
  const files: string[] = [];
  for (let d = 0; d < 4; d++) {
    const parent = (await expectOk(server, 'blocks/document/create', { notebook, title: `Scratch ${d}`, markdown: paragraph(next, `s-${kill}-${d}`) })).id as string;
    const child = (await expectOk(server, 'blocks/document/create', { notebook, parentId: parent, title: `Scratch child ${d}`, markdown: paragraph(next, `c-${kill}-${d}`) })).id as string;
    files.push(`${notebook}/${parent}.json`, `${notebook}/${parent}/${child}.json`);
  }
  const entry = { files, removal: 'not sent' as 'not sent' | 'in flight' | 'acknowledged' };
  ledger.notebooks.set(notebook, entry);
  return async () => {
    await new Promise((resolve) => setTimeout(resolve, next() * 1_000));
    if (killing.now) return;
    entry.removal = 'in flight';
    try {
      // A long action (a job): waited for, as a client wanting its answer does.
      const answer = await server.call('blocks/notebook/remove', { id: notebook }, { prefer: 'wait=60' });
      if (answer.status !== 200) failures.push(`kill ${kill}: a notebook removal answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
      else {
        entry.removal = 'acknowledged';
        ledger.counts.notebookRemovals++;
      }
    } catch (error) {
      if (!killing.now) failures.push(`kill ${kill}: a notebook removal failed before the kill: ${(error as Error).message}`);
    }
  };
}

/** The start after a kill recovers; the workspace is then checked through the kernel, on disk, and against a rebuild. */
async function recoverAndCheck(options: KillOptions, workspace: string, token: string, notebook: string, ledger: Ledger, kill: number, failures: string[]): Promise<number> {
  const server = await startServer(options.cli, workspace, token);
  try {
    const { problems } = (await expectOk(server, 'blocks/index/problems', {})) as { problems: unknown[] };
    if (problems.length > 0) failures.push(`kill ${kill}: the index reports problems after the restart: ${JSON.stringify(problems).slice(0, 300)}`);
  } finally {
    await server.stop('SIGTERM');
  }
  await checkFiles(workspace, notebook, ledger, kill, failures);
  await checkNotebooks(workspace, ledger, kill, failures);
  const live = dumpIndex(workspace);
  const rebuild = spawn(process.execPath, [options.cli, 'index', 'rebuild', '--workspace', workspace], { stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => rebuild.on('exit', resolve));
  if (code !== 0) failures.push(`kill ${kill}: index rebuild exited ${code}`);
  else if (dumpIndex(workspace) !== live) failures.push(`kill ${kill}: the index after the recovery differs from a rebuild of the files`);
  return server.listenMs;
}

export async function killCycles(options: KillOptions): Promise<KillReport> {
  const next = random(options.seed);
  const ledger = newLedger();
  const failures: string[] = [];
  const restartMs: number[] = [];
  let importsCut = 0;
  const prepared = await prepare(options, ledger, next);
  const { workspace, token, notebook, docs } = prepared;
  let server: Server = prepared.server;
  try {
    for (let kill = 1; kill <= options.kills; kill++) {
      const killing = { now: false };
      const removeNotebook = await notebookToRemove(server, ledger, kill, next, killing, failures);
      const running = Array.from({ length: options.clients }, (_, c) => runClient({
        call: server.call, ledger, notebook, docs, home: docs[c % docs.length]!, name: `k${kill}c${c}`, next: random(options.seed + kill * 1000 + c), failures, killing,
      }));
      running.push(removeNotebook());
      const anImport = await importToRun(server.call, options.folder, kill, next, killing, failures);
      running.push(anImport.run().then((acknowledged) => { if (acknowledged) ledger.counts.imports++; }));
      const [min, max] = options.killAfterMs;
      await new Promise((resolve) => setTimeout(resolve, min + next() * (max - min)));
      const holdUntil = performance.now() + KILL_HOLD_MAX_MS;
      while (options.killOnceAcknowledged && !options.killOnceAcknowledged(ledger.counts) && performance.now() < holdUntil) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      killing.now = true;
      await server.stop('SIGKILL');
      await Promise.all(running);
      // An import the kill cut midway: part of its documents on disk, for the start to undo.
      const { found, of } = await importedSoFar(workspace, anImport.entry);
      if (found > 0 && found < of) importsCut++;
      await options.afterKill?.(workspace, kill);
      restartMs.push(await recoverAndCheck(options, workspace, token, notebook, ledger, kill, failures));
      await checkImport(workspace, anImport.entry, kill, failures);
      options.progress?.(`kill ${kill}: ${JSON.stringify(ledger.counts)} acknowledged so far, restart ${restartMs.at(-1)!.toFixed(0)} ms, failures so far ${failures.length}`);
      if (kill < options.kills) server = await startServer(options.cli, workspace, token);
    }
  } finally {
    await server.stop('SIGKILL');
  }
  return { kills: options.kills, acknowledged: { ...ledger.counts }, failures, restartMs, importsCut };
}
