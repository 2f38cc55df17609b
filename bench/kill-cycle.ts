/**
 * Kills under concurrent writes (issue 13, "kills survived"): `quire serve` over loopback, clients
 * appending, updating, deleting and moving blocks, creating, moving, renaming and removing documents, the server SIGKILLed at a random
 * moment; then started again (which recovers: the write journal replayed, the stale lock taken over,
 * temporary files swept), checked over HTTP, stopped cleanly, and checked on disk. Each kill must keep
 * every acknowledged change: a block or a document is where it was last acknowledged, with its last
 * acknowledged text or title (or those of the change in flight at the kill), an acknowledged delete or
 * removal stays gone, and no block or document is in two files.
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
  acknowledged: { appends: number; updates: number; deletes: number; blockMoves: number; documents: number; documentMoves: number; renames: number; removes: number };
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

/**
 * What the clients were told, and what was in flight when the server died. Each list holds what a
 * thing may be found as: the last acknowledged value first, then any sent after it (at most one, as a
 * client waits for each answer); an acknowledgement cuts the list down to its value.
 */
interface Ledger {
  /** Block id → the documents it may be in. */
  blockDocs: Map<string, string[]>;
  /** Block id → the markers its text may start with. */
  blockTexts: Map<string, string[]>;
  /** Blocks whose delete was sent (in flight it may have happened or not), and those acknowledged. */
  blocksMayBeGone: Set<string>;
  blocksDeleted: Set<string>;
  /** Document id → the parents it may be under (null: the notebook's top). */
  docParents: Map<string, (string | null)[]>;
  docTitles: Map<string, string[]>;
  docsMayBeGone: Set<string>;
  docsRemoved: Set<string>;
  counts: KillReport['acknowledged'];
}

function sent<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.get(key)!.push(value);
}

function acknowledged<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.set(key, [value]);
}

/** One client's changes, one after another, until the server stops answering. */
async function client(server: Server, ledger: Ledger, notebook: string, docs: readonly string[], home: string, name: string, next: () => number, failures: string[]): Promise<void> {
  const mine: string[] = [];
  const myDocs: string[] = [];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  // An answer other than 200 from a live server is a failure of its own: every change here is valid.
  const call = async (what: string, path: string, body: unknown): Promise<Record<string, unknown> | undefined> => {
    const answer = await server.call(path, body);
    if (answer.status === 200) return answer.body.result as Record<string, unknown>;
    failures.push(`${name}: ${what} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
    return undefined;
  };
  const counts = ledger.counts;
  for (let n = 0; ; n++) {
    const choice = next();
    const marker = `${name}-${n}`;
    try {
      if (choice < 0.5 || mine.length < 3) {
        const result = await call('an append', 'blocks/block/append', { parentId: home, markdown: paragraph(next, `a-${marker}`) });
        if (!result) return;
        const id = (result.ids as string[])[0]!;
        ledger.blockDocs.set(id, [home]);
        ledger.blockTexts.set(id, [`a-${marker}`]);
        mine.push(id);
        counts.appends++;
      } else if (choice < 0.7) {
        const id = mine[mine.length - 1 - Math.floor(next() * Math.min(3, mine.length))]!;
        sent(ledger.blockTexts, id, `u-${marker}`);
        if (!(await call('an update', 'blocks/block/update', { id, markdown: paragraph(next, `u-${marker}`) }))) return;
        acknowledged(ledger.blockTexts, id, `u-${marker}`);
        counts.updates++;
      } else if (choice < 0.8) {
        const id = mine.shift()!;
        ledger.blocksMayBeGone.add(id);
        if (!(await call('a delete', 'blocks/block/delete', { id }))) return;
        ledger.blocksDeleted.add(id);
        counts.deletes++;
      } else if (choice < 0.86) {
        // A block moved to another document: two files change together.
        const id = pick(mine);
        const to = pick(docs.filter((doc) => doc !== ledger.blockDocs.get(id)![0]));
        sent(ledger.blockDocs, id, to);
        if (!(await call('a block move', 'blocks/block/move', { id, parentId: to }))) return;
        acknowledged(ledger.blockDocs, id, to);
        counts.blockMoves++;
      } else if (choice < 0.91 || myDocs.length === 0) {
        // Some under a document of its own, so that removals take child documents along.
        const parent = myDocs.length > 0 && next() < 0.3 ? pick(myDocs) : null;
        const result = await call('a document create', 'blocks/document/create', { notebook, title: `t-${marker}`, markdown: paragraph(next, `d-${marker}`), ...(parent === null ? {} : { parentId: parent }) });
        if (!result) return;
        const id = result.id as string;
        ledger.docParents.set(id, [parent]);
        ledger.docTitles.set(id, [`t-${marker}`]);
        myDocs.push(id);
        counts.documents++;
      } else if (choice < 0.95) {
        // A document moved under another, or back to the top: its file and its folder of children move.
        const id = pick(myDocs);
        const parent = next() < 0.3 ? null : pick(docs);
        sent(ledger.docParents, id, parent);
        if (!(await call('a document move', 'blocks/document/move', { id, notebook, ...(parent === null ? {} : { parentId: parent }) }))) return;
        acknowledged(ledger.docParents, id, parent);
        counts.documentMoves++;
      } else if (choice < 0.97) {
        const id = pick(myDocs);
        sent(ledger.docTitles, id, `r-${marker}`);
        if (!(await call('a rename', 'blocks/document/rename', { id, title: `r-${marker}` }))) return;
        acknowledged(ledger.docTitles, id, `r-${marker}`);
        counts.renames++;
      } else {
        const id = pick(myDocs);
        // Its child documents go with it.
        const gone = subtreeOf(ledger, id);
        for (const doc of gone) {
          ledger.docsMayBeGone.add(doc);
          if (myDocs.includes(doc)) myDocs.splice(myDocs.indexOf(doc), 1);
        }
        if (!(await call('a document remove', 'blocks/document/remove', { id }))) return;
        for (const doc of gone) ledger.docsRemoved.add(doc);
        counts.removes++;
      }
    } catch {
      // The connection died with the server: what was in flight may or may not have happened.
      return;
    }
  }
}

/** A document and those under it, as last acknowledged (a client's changes come one after another). */
function subtreeOf(ledger: Ledger, id: string): string[] {
  const found = [id];
  for (let i = 0; i < found.length; i++) {
    for (const [doc, parents] of ledger.docParents) if (parents[0] === found[i] && !ledger.docsRemoved.has(doc)) found.push(doc);
  }
  return found;
}

interface FoundDocument { parent: string | null; title: string; file: string }

/** Every document file below the notebook's folder: its place, title and blocks (their texts). */
async function readDocuments(folder: string, kill: number, failures: string[]): Promise<{ docs: Map<string, FoundDocument>; blocks: Map<string, { doc: string; text: string }> }> {
  const docs = new Map<string, FoundDocument>();
  const blocks = new Map<string, { doc: string; text: string }>();
  const walk = async (dir: string, parent: string | null): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        await walk(join(dir, entry.name), entry.name);
        continue;
      }
      if (!entry.name.endsWith('.json') || entry.name.startsWith('.')) continue;
      const file = join(dir, entry.name);
      let root: { id: string; content?: string; children?: unknown[] };
      try {
        root = JSON.parse(await readFile(file, 'utf8')) as typeof root;
      } catch {
        failures.push(`kill ${kill}: ${file} is not whole JSON`);
        continue;
      }
      const other = docs.get(root.id);
      if (other) failures.push(`kill ${kill}: document ${root.id} has two files, ${other.file} and ${file}`);
      docs.set(root.id, { parent, title: root.content ?? '', file });
      const visit = (block: { id: string; content?: string; children?: unknown[] }): void => {
        const seen = blocks.get(block.id);
        if (seen) failures.push(`kill ${kill}: block ${block.id} is in two documents, ${seen.doc} and ${root.id}`);
        blocks.set(block.id, { doc: root.id, text: block.content ?? '' });
        for (const child of block.children ?? []) visit(child as typeof block);
      };
      for (const child of root.children ?? []) visit(child as typeof root);
    }
  };
  await walk(folder, null);
  return { docs, blocks };
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
  const { docs, blocks } = await readDocuments(join(workspace, 'data', notebook), kill, failures);
  for (const [id, places] of ledger.blockDocs) {
    const found = blocks.get(id);
    if (ledger.blocksDeleted.has(id)) {
      if (found) failures.push(`kill ${kill}: block ${id}, whose delete was acknowledged, is back`);
    } else if (!found) {
      if (!ledger.blocksMayBeGone.has(id)) failures.push(`kill ${kill}: acknowledged block ${id} of ${places[0]} is missing`);
    } else {
      if (!places.includes(found.doc)) failures.push(`kill ${kill}: block ${id} is in ${found.doc}, not where it was last acknowledged (${places[0]})`);
      const texts = ledger.blockTexts.get(id)!;
      if (!texts.some((marker) => found.text.startsWith(`${marker} `))) failures.push(`kill ${kill}: block ${id} holds '${found.text.slice(0, 24)}…', not its last acknowledged text (${texts[0]})`);
    }
  }
  for (const [id, parents] of ledger.docParents) {
    const found = docs.get(id);
    if (ledger.docsRemoved.has(id)) {
      if (found) failures.push(`kill ${kill}: document ${id}, whose removal was acknowledged, is back`);
    } else if (!found) {
      if (!ledger.docsMayBeGone.has(id)) failures.push(`kill ${kill}: acknowledged document ${id} is missing`);
    } else {
      if (!parents.includes(found.parent)) failures.push(`kill ${kill}: document ${id} is under ${found.parent ?? 'the notebook'}, not where it was last acknowledged (${parents[0] ?? 'the notebook'})`);
      const titles = ledger.docTitles.get(id)!;
      if (!titles.includes(found.title)) failures.push(`kill ${kill}: document ${id} is titled '${found.title}', not its last acknowledged title (${titles[0]})`);
    }
  }
  for (const [id, { parent, file }] of docs) {
    if (parent !== null && !docs.has(parent)) failures.push(`kill ${kill}: document ${id} (${file}) is under ${parent}, which has no file: an orphan`);
  }
  const leftovers = (await filesBelow(join(workspace, 'data'))).filter((path) => path.endsWith('.tmp'));
  if (leftovers.length > 0) failures.push(`kill ${kill}: temporary files left after a start and a clean stop: ${leftovers.join(', ')}`);
  const journals = await filesBelow(join(workspace, '.quire', 'journal'));
  if (journals.length > 0) failures.push(`kill ${kill}: journal files left after a clean stop: ${journals.join(', ')}`);
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
  const ledger: Ledger = {
    blockDocs: new Map(), blockTexts: new Map(), blocksMayBeGone: new Set(), blocksDeleted: new Set(),
    docParents: new Map(), docTitles: new Map(), docsMayBeGone: new Set(), docsRemoved: new Set(),
    counts: { appends: 0, updates: 0, deletes: 0, blockMoves: 0, documents: 0, documentMoves: 0, renames: 0, removes: 0 },
  };
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
    ledger.docParents.set(id, [null]);
    ledger.docTitles.set(id, [`Document ${d}`]);
    // Its first blocks are acknowledged with it, and checked as the appended ones are.
    const { children } = (await ok('blocks/block/get_children', { id })) as { children: { id: string }[] };
    children.forEach((child, i) => {
      ledger.blockDocs.set(child.id, [id]);
      ledger.blockTexts.set(child.id, [`p-${d}-${i}`]);
    });
  }
  try {
    for (let kill = 1; kill <= options.kills; kill++) {
      const running = Array.from({ length: options.clients }, (_, c) => client(server, ledger, notebook, docs, docs[c % docs.length]!, `k${kill}c${c}`, random(options.seed + kill * 1000 + c), failures));
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
