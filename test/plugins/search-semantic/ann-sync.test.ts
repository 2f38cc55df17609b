import Database from 'better-sqlite3';
import { getEventListeners } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger, type Logger } from '../../../core/log.js';
import { AnnEngine } from '../../../plugins/search-semantic/ann/ann-engine.js';
import { AnnSync } from '../../../plugins/search-semantic/ann-sync.js';
import { EmbeddingStore } from '../../../plugins/search-semantic/embedding-store.js';
import { vectorToBlob } from '../../../plugins/search-semantic/vector-blob.js';

const MODEL = 'm';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => { for (const cleanup of cleanups.splice(0).reverse()) await cleanup(); });

function vector(seed: number, dimensions: number): Float32Array {
  return Float32Array.from({ length: dimensions }, (_, j) => Math.sin(seed * 12.9898 + j * 78.233) + 0.1 * Math.cos(seed * j));
}

/** A store over blocks `ids`, as the blocks index holds them, and a sync of its vectors into an HNSW graph. */
function storeAndSync(ids: string[], warnings: string[]): { store: EmbeddingStore; sync: AnnSync; keys: number[] } {
  const folder = mkdtempSync(join(tmpdir(), 'quire-ann-sync-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const blocksFile = join(folder, 'quire.db');
  const blocks = new Database(blocksFile);
  blocks.exec('CREATE TABLE blocks (id TEXT NOT NULL UNIQUE, root_id TEXT, notebook TEXT, path TEXT, hpath TEXT, type TEXT, subtype TEXT, content TEXT)');
  const insert = blocks.prepare("INSERT INTO blocks VALUES (?, 'd', 'n', 'n/d.json', '/D', 'paragraph', NULL, ?)");
  blocks.transaction(() => { for (const id of ids) insert.run(id, `text of ${id}`); })();
  blocks.close();
  const store = new EmbeddingStore(join(folder, 'embeddings.db'), blocksFile);
  cleanups.push(() => store.close());
  store.transaction(() => { for (const id of ids) store.insert(id, `h-${id}`, null); });
  const rows = store.rowsOf(ids);
  const keys = ids.map((id) => rows.get(id)!.key);
  const log: Logger = { ...silentLogger, warn: (message, fields) => { warnings.push(`${message} ${JSON.stringify(fields ?? {})}`); } };
  const indexDir = join(folder, 'index');
  mkdirSync(indexDir);
  const sync = new AnnSync(store, indexDir, 86_400_000, log);
  cleanups.push(() => sync.close());
  return { store, sync, keys };
}

function embedAll(store: EmbeddingStore, ids: string[], keys: number[], dimensions: number): void {
  keys.forEach((key, i) => store.writeVector(key, `h-${ids[i]}`, `h-${ids[i]}`, MODEL, vectorToBlob(vector(i + 1, dimensions)), dimensions, false, MODEL));
}

describe('the vector index following the stored vectors', () => {
  it('hands out no graph of the old size once the embedder answers at another, and ends with one of the new size', async () => {
    const ids = ['a', 'b', 'c'];
    const warnings: string[] = [];
    const { store, sync, keys } = storeAndSync(ids, warnings);
    embedAll(store, ids, keys, 64);
    sync.use(MODEL, 64);
    await sync.settled();
    expect(sync.state).toBe('ready');
    expect(sync.ready(MODEL, 64)).toBeDefined();
    // The model behind the name now answers with 32 numbers: the blocks are embedded again, and the
    // service asks for the graph of that size and a catch-up, as after every batch.
    embedAll(store, ids, keys, 32);
    sync.use(MODEL, 32);
    sync.catchUp();
    // Until the graph of 32 is open, none is handed out, and the status does not say ready (it said
    // ready, and a search then found the old graph, or none once it was closed: "not available").
    expect(sync.state).not.toBe('ready');
    expect(sync.ready(MODEL, 32)).toBeUndefined();
    await sync.settled();
    expect(sync.state).toBe('ready');
    const graph = sync.ready(MODEL, 32)!;
    expect(graph).toBeDefined();
    expect(sync.size()).toBe(3);
    expect((await graph.search(vector(2, 32), 1))[0]!.key).toBe(keys[1]);
    // Vectors of 32 were never put into the graph of 64 by a catch-up.
    expect(warnings).toEqual([]);
  });

  it('uses a graph it rebuilt whose save failed (a full disk), and saves it on the schedule', async () => {
    vi.stubEnv('QUIRE_ANN_THREAD', 'main');
    cleanups.push(() => { vi.unstubAllEnvs(); });
    const ids = ['a', 'b', 'c'];
    const warnings: string[] = [];
    const { store, sync, keys } = storeAndSync(ids, warnings);
    embedAll(store, ids, keys, 16);
    const save = vi.spyOn(AnnEngine.prototype, 'save').mockImplementationOnce(() => { throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }); });
    cleanups.push(() => save.mockRestore());
    sync.use(MODEL, 16);
    await sync.settled();
    // It was 'failed', nothing handed out, until a write to the notes opened it again.
    expect(sync.state).toBe('ready');
    expect((await sync.ready(MODEL, 16)!.search(vector(2, 16), 1))[0]!.key).toBe(keys[1]);
    expect(warnings).toEqual([expect.stringMatching(/^saving the rebuilt vector index failed.*ENOSPC/)]);
    await sync.save();
    expect(save).toHaveBeenCalledTimes(2);
  });

  it('waits for the vectors stored before a query, not for those an embedder goes on writing meanwhile', async () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `b${i}`);
    const { store, sync, keys } = storeAndSync(ids, []);
    embedAll(store, ids.slice(0, 3), keys.slice(0, 3), 16);
    sync.use(MODEL, 16);
    await sync.settled();
    // A fast embedder: a batch of 200 vectors every millisecond, each followed by a catch-up.
    let written = 3;
    const batch = () => {
      const next = Math.min(ids.length, written + 200);
      store.transaction(() => { for (let i = written; i < next; i++) store.writeVector(keys[i]!, `h-${ids[i]}`, `h-${ids[i]}`, MODEL, vectorToBlob(vector(i + 1, 16)), 16, false, MODEL); });
      written = next;
      sync.catchUp();
    };
    // A backlog of several pages (512 vectors each) before the query.
    for (let i = 0; i < 15; i++) batch();
    const storedBefore = written;
    const writer = setInterval(() => { if (written < ids.length) batch(); }, 1);
    cleanups.push(() => clearInterval(writer));
    const query = new AbortController();
    await sync.caughtUp(query.signal);
    const atAnswer = { size: sync.size(), written };
    clearInterval(writer);
    expect(atAnswer.size).toBeGreaterThanOrEqual(storedBefore);
    // It waited until the writer ran out (all 20,000), the query with it.
    expect(atAnswer.written).toBeLessThan(ids.length);
    // Nothing left listening on the query's signal (a listener a page waited piled up).
    expect(getEventListeners(query.signal, 'abort')).toHaveLength(0);
    await sync.settled();
  });

  it('stops a rebuild of a size no longer wanted, and the graph of the size asked for last is the one ready', async () => {
    const ids = Array.from({ length: 1_200 }, (_, i) => `b${i}`);
    const warnings: string[] = [];
    const { store, sync, keys } = storeAndSync(ids, warnings);
    embedAll(store, ids, keys, 16);
    sync.use(MODEL, 16);
    // While that graph is built (no saved file: rebuilt from the store, page by page), the size changes.
    for (const end = Date.now() + 20_000; sync.state !== 'rebuilding';) {
      if (Date.now() > end) throw new Error(`the graph was never seen rebuilding (state ${sync.state})`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    embedAll(store, ids, keys, 8);
    sync.use(MODEL, 8);
    expect(sync.ready(MODEL, 16)).toBeUndefined();
    // Every graph handed out for 8 meanwhile answers a query of 8 (the graph of 16, once built, was).
    const handedOut: string[] = [];
    let settled = false;
    const done = sync.settled().then(() => { settled = true; });
    while (!settled) {
      const graph = sync.ready(MODEL, 8);
      if (graph) handedOut.push(await graph.search(vector(1, 8), 1).then((hits) => (hits[0]?.key === keys[0] ? 'right' : `wrong: ${JSON.stringify(hits)}`), (error: unknown) => `threw: ${String(error)}`));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await done;
    expect(handedOut.filter((outcome) => outcome !== 'right')).toEqual([]);
    expect(sync.state).toBe('ready');
    expect(sync.ready(MODEL, 16)).toBeUndefined();
    expect(sync.ready(MODEL, 8)).toBeDefined();
    expect(sync.size()).toBe(1_200);
    expect(warnings).toEqual([]);
  });
});
