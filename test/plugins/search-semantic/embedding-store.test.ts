import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddingStore, STALE_WHERE } from '../../../plugins/search-semantic/embedding-store.js';
import { characters, ignoreRules } from '../../../plugins/search-semantic/ignore-rules.js';
import { blobToVector, vectorToBlob } from '../../../plugins/search-semantic/vector-blob.js';

const folders: string[] = [];
afterEach(() => { for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true }); });

/** A store over a blocks table holding `ids` (what the blocks index holds, reduced to what the store reads). */
function storeWith(ids: string[]): EmbeddingStore {
  const folder = mkdtempSync(join(tmpdir(), 'quire-store-'));
  folders.push(folder);
  const blocksFile = join(folder, 'quire.db');
  const blocks = new Database(blocksFile);
  blocks.exec('CREATE TABLE blocks (id TEXT NOT NULL UNIQUE, root_id TEXT, notebook TEXT, path TEXT, hpath TEXT, type TEXT, subtype TEXT, content TEXT)');
  for (const id of ids) blocks.prepare("INSERT INTO blocks VALUES (?, 'd', 'n', 'n/d.json', '/D', 'paragraph', NULL, ?)").run(id, `text of ${id}`);
  blocks.close();
  return new EmbeddingStore(join(folder, 'embeddings.db'), blocksFile);
}

const retry = { baseMs: 1_000, maxMs: 8_000, maxFailures: 5 };

describe('the embeddings store', () => {
  it('backs a failed block off exponentially, capped, and gives it up after maxFailures', () => {
    const store = storeWith(['a']);
    store.insert('a', 'h', null);
    const key = store.rowsOf(['a']).get('a')!.key;
    const t = 1_000_000;
    expect(store.due(t, retry, 10).map((row) => row.block_id)).toEqual(['a']);
    // After failure n the block waits base × 2^(n-1), at most maxMs.
    const waits: number[] = [];
    for (let failures = 1; failures < retry.maxFailures; failures++) {
      store.markFailed([key], t, 'boom');
      const wait = store.nextDue(retry)! - t;
      expect(store.due(t + wait - 1, retry, 10)).toEqual([]);
      expect(store.due(t + wait, retry, 10).map((row) => row.block_id)).toEqual(['a']);
      waits.push(wait);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000]);
    store.markFailed([key], t, 'boom');
    expect(store.due(t + 10 ** 9, retry, 10)).toEqual([]);
    expect(store.nextDue(retry)).toBeUndefined();
    expect(store.counts('m', retry.maxFailures)).toMatchObject({ failed: 1, gaveUp: 1, pending: 0 });
    expect(store.lastError()).toBe('boom');
    // retry_failed brings it back at once.
    expect(store.retryFailed()).toBe(1);
    expect(store.due(t, retry, 10).map((row) => row.block_id)).toEqual(['a']);
    store.close();
  });

  it('orders due blocks by fewest failures, and never offers a block the blocks index no longer holds', () => {
    const store = storeWith(['a', 'b']);
    for (const id of ['a', 'b', 'gone']) store.insert(id, 'h', null);
    store.markFailed([store.rowsOf(['a']).get('a')!.key], 0, 'x');
    expect(store.due(10 ** 9, retry, 10).map((row) => row.block_id)).toEqual(['b', 'a']);
    store.close();
  });

  it('marks vectors of another model stale and records every change the HNSW index must follow', () => {
    const store = storeWith(['a', 'b']);
    store.insert('a', 'ha', null);
    store.insert('b', 'hb', null);
    const rows = store.rowsOf(['a', 'b']);
    const before = store.maxSeq();
    store.transaction(() => {
      store.writeVector(rows.get('a')!.key, 'ha', 'ha', 'm1', vectorToBlob(new Float32Array([1, 0])), 2, true, 'm1');
      store.writeVector(rows.get('b')!.key, 'hb', 'hb', 'm1', vectorToBlob(new Float32Array([0, 1])), 2, true, 'm1');
    });
    expect(store.counts('m1', 5)).toMatchObject({ indexed: 2, pending: 0, stale: 0 });
    store.activateModel('m2');
    expect(store.counts('m2', 5)).toMatchObject({ indexed: 0, pending: 2, stale: 2 });
    // The text changed while a batch was on the way: the vector is kept, the block stays due.
    store.update(rows.get('a')!.key, 'ha2', null, 'm2');
    store.writeVector(rows.get('a')!.key, 'ha', 'ha', 'm2', vectorToBlob(new Float32Array([1, 1])), 2, false, 'm2');
    expect(store.counts('m2', 5)).toMatchObject({ indexed: 0, pending: 2 });
    store.delete(rows.get('b')!.key);
    const changes = store.changesSince(before, 100);
    // Each key's last state, in order: a's vector of m2; b removed (its m1 vector went with it).
    expect(changes.map((change) => [change.key, change.model, change.vector ? Array.from(blobToVector(change.vector)) : null])).toEqual([
      [rows.get('a')!.key, 'm2', [1, 1]],
      [rows.get('b')!.key, null, null],
    ]);
    store.close();
  });

  it('never takes a vector of the size a model answered before for done: a text put back, or a switch back to the model', () => {
    const store = storeWith(['a', 'b']);
    store.insert('a', 'ha', null);
    store.insert('b', 'hb', null);
    const rows = store.rowsOf(['a', 'b']);
    store.activateModel('m1');
    store.noteDimensions('m1', 2);
    for (const id of ['a', 'b']) store.writeVector(rows.get(id)!.key, `h${id}`, `h${id}`, 'm1', vectorToBlob(new Float32Array([1, 0])), 2, false, 'm1');
    expect(store.counts('m1', 5)).toMatchObject({ indexed: 2, pending: 0 });
    // The model now answers with 3 numbers: both blocks are to be embedded again.
    expect(store.noteDimensions('m1', 3)).toBe(true);
    expect(store.counts('m1', 5)).toMatchObject({ indexed: 0, pending: 2 });
    // a is edited and put back before its turn came: its vector of 2 matches the text, not the size.
    store.update(rows.get('a')!.key, 'ha2', null, 'm1');
    store.update(rows.get('a')!.key, 'ha', null, 'm1');
    // Another model for a while, then back to m1 (whose size is 3 now).
    store.activateModel('m2');
    store.activateModel('m1');
    expect(store.counts('m1', 5)).toMatchObject({ indexed: 0, pending: 2 });
    store.close();
  });

  it('keeps no vector of a block ignored while its batch was at the embedder', () => {
    const store = storeWith(['a']);
    store.insert('a', 'ha', null);
    const key = store.rowsOf(['a']).get('a')!.key;
    // Moved under an ignored path (its text the same) while the batch was out.
    store.update(key, 'ha', 'path', 'm1');
    store.writeVector(key, 'ha', 'ha', 'm1', vectorToBlob(new Float32Array([1, 0])), 2, false, 'm1');
    expect(store.rowsOf(['a']).get('a')!.has_vector).toBe(0);
    expect(store.db.prepare('SELECT count(*) FROM embedding_vectors').pluck().get()).toBe(0);
    expect(store.counts('m1', 5)).toMatchObject({ indexed: 0 });
    store.close();
  });

  it('keeps no vector of a block deleted while its batch was at the embedder, nor of one deleted or dropped later', () => {
    const store = storeWith(['a', 'b', 'c']);
    for (const id of ['a', 'b', 'c']) store.insert(id, `h${id}`, null);
    const rows = store.rowsOf(['a', 'b', 'c']);
    const vectorKeys = () => store.db.prepare('SELECT key FROM embedding_vectors ORDER BY key').pluck().all() as number[];
    store.delete(rows.get('a')!.key);
    // The answer for a arrives after its block went.
    store.writeVector(rows.get('a')!.key, 'ha', 'ha', 'm1', vectorToBlob(new Float32Array([1, 0])), 2, false, 'm1');
    store.writeVector(rows.get('b')!.key, 'hb', 'hb', 'm1', vectorToBlob(new Float32Array([0, 1])), 2, false, 'm1');
    store.writeVector(rows.get('c')!.key, 'hc', 'hc', 'm1', vectorToBlob(new Float32Array([1, 1])), 2, false, 'm1');
    expect(vectorKeys()).toEqual([rows.get('b')!.key, rows.get('c')!.key]);
    store.delete(rows.get('b')!.key);
    store.dropVector(rows.get('c')!.key);
    expect(vectorKeys()).toEqual([]);
    expect(store.rowsOf(['c']).get('c')!.has_vector).toBe(0);
    store.close();
  });

  it('finds rows waiting with a vector of another model from their own partial index, not from every row to do', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `b${i}`);
    const store = storeWith(ids);
    for (const id of ids) store.insert(id, `h-${id}`, null);
    // 50 rows to do, none with a vector: nothing is stale.
    expect(store.hasStale('m1')).toBe(false);
    const key = store.rowsOf(['b7']).get('b7')!.key;
    store.writeVector(key, 'h-b7', 'h-b7', 'm0', vectorToBlob(new Float32Array([1, 0])), 2, false, 'm0');
    expect(store.hasStale('m0')).toBe(false);
    // Another model in use: b7's vector waits, stale.
    store.activateModel('m1');
    expect(store.hasStale('m1')).toBe(true);
    expect(store.counts('m1', 5)).toMatchObject({ pending: 50, stale: 1 });
    // A million rows to do after a first start or a change of model: the stale count must not visit each.
    for (const sql of [`SELECT count(*) FROM block_embeddings WHERE ${STALE_WHERE}`, `SELECT EXISTS (SELECT 1 FROM block_embeddings WHERE ${STALE_WHERE})`]) {
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('m1') as { detail: string }[]).map((row) => row.detail).join('; ');
      expect(plan).toContain('USING INDEX block_embeddings_stale');
    }
    store.close();
  });
});

describe('a store of version 1 (each vector in its row)', () => {
  it('is migrated in place at open: every vector kept, the rows and their state as they were', () => {
    const folder = mkdtempSync(join(tmpdir(), 'quire-store-v1-'));
    folders.push(folder);
    const blocksFile = join(folder, 'quire.db');
    const blocks = new Database(blocksFile);
    blocks.exec('CREATE TABLE blocks (id TEXT NOT NULL UNIQUE, root_id TEXT, notebook TEXT, path TEXT, hpath TEXT, type TEXT, subtype TEXT, content TEXT)');
    blocks.close();
    // Version 1's tables, as that release wrote them.
    const old = new Database(join(folder, 'embeddings.db'));
    old.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO meta VALUES ('version', '1'), ('model', 'm1');
      CREATE TABLE block_embeddings (key INTEGER PRIMARY KEY AUTOINCREMENT, block_id TEXT NOT NULL UNIQUE, hash TEXT NOT NULL, model TEXT, dimensions INTEGER,
        vector_hash TEXT, vector BLOB, remote INTEGER NOT NULL DEFAULT 0, ok INTEGER NOT NULL DEFAULT 0, fail_count INTEGER NOT NULL DEFAULT 0,
        last_tried INTEGER NOT NULL DEFAULT 0, last_error TEXT, ignored TEXT, seq INTEGER NOT NULL);
      CREATE INDEX block_embeddings_due ON block_embeddings (fail_count, key DESC) WHERE ok = 0 AND ignored IS NULL;
      CREATE INDEX block_embeddings_ignored ON block_embeddings (ignored) WHERE ignored IS NOT NULL;
      CREATE INDEX block_embeddings_seq ON block_embeddings (seq);
      CREATE INDEX block_embeddings_model ON block_embeddings (model, dimensions) WHERE vector IS NOT NULL;
      CREATE TABLE removed_keys (key INTEGER PRIMARY KEY, seq INTEGER NOT NULL);`);
    const insert = old.prepare('INSERT INTO block_embeddings (block_id, hash, model, dimensions, vector_hash, vector, remote, ok, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run('a', 'ha', 'm1', 2, 'ha', vectorToBlob(new Float32Array([1, 0])), 1, 1, 1);
    insert.run('b', 'hb', 'm1', 2, 'hb', vectorToBlob(new Float32Array([0, 1])), 0, 1, 2);
    insert.run('c', 'hc', null, null, null, null, 0, 0, 3);
    // Key 4 was given out and its block deleted: it must never be given again.
    insert.run('gone', 'hg', null, null, null, null, 0, 0, 4);
    old.prepare("DELETE FROM block_embeddings WHERE block_id = 'gone'").run();
    old.close();
    const store = new EmbeddingStore(join(folder, 'embeddings.db'), blocksFile);
    expect(store.meta('version')).toBe('2');
    expect(store.meta('model')).toBe('m1');
    expect(store.vectorsOf('m1', 2, 0, 10).map((row) => [row.key, Array.from(blobToVector(row.vector))])).toEqual([[1, [1, 0]], [2, [0, 1]]]);
    expect(store.counts('m1', 5)).toMatchObject({ total: 3, indexed: 2, pending: 1, stale: 0 });
    const rows = store.rowsOf(['a', 'b', 'c']);
    expect(['a', 'b', 'c'].map((id) => [rows.get(id)!.has_vector, rows.get(id)!.remote])).toEqual([[1, 1], [1, 0], [0, 0]]);
    expect((store.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('block_embeddings') as string[])).not.toContain('vector');
    // The sequence goes on from where version 1 left it: the HNSW file's watermark stays valid.
    expect(store.maxSeq()).toBe(3);
    store.insert('d', 'hd', null);
    expect(store.rowsOf(['d']).get('d')!.key).toBe(5);
    store.close();
    // Opened again, it is version 2 as it is.
    const again = new EmbeddingStore(join(folder, 'embeddings.db'), blocksFile);
    expect(again.vectorCount('m1', 2)).toBe(2);
    expect(again.counts('m1', 5).total).toBe(4);
    again.close();
  });

  it('counts its rows without reading them: kept by triggers, and counted again for a file without them', () => {
    const store = storeWith(['a', 'b', 'c']);
    const file = store.db.name;
    const counted = () => store.db.prepare('SELECT count(*) FROM block_embeddings').pluck().get();
    for (const id of ['a', 'b', 'c']) store.insert(id, `h${id}`, null);
    store.delete(store.rowsOf(['b']).get('b')!.key);
    expect(store.counts('m', 5).total).toBe(2);
    expect(counted()).toBe(2);
    // A failed insert (the same block twice) and a rolled-back one count nothing.
    expect(() => store.insert('a', 'again', null)).toThrow();
    expect(() => store.transaction(() => { store.insert('b', 'hb', null); throw new Error('rolled back'); })).toThrow('rolled back');
    expect(store.counts('m', 5).total).toBe(2);
    // A store whose triggers were lost (a table dropped and made again by another version) is counted at open.
    store.db.exec('DROP TRIGGER block_embeddings_counted_insert; UPDATE row_count SET n = 99');
    store.close();
    const again = new EmbeddingStore(file, join(file, '..', 'quire.db'));
    expect(again.counts('m', 5).total).toBe(2);
    again.insert('b', 'hb', null);
    expect(again.counts('m', 5).total).toBe(3);
    again.close();
  });

  it('keeps the rows to do and the failed ones counted by triggers through every change, and counts them again for a file without them', () => {
    const store = storeWith(['a', 'b', 'c', 'd', 'e']);
    const file = store.db.name;
    const recount = () => store.db.prepare(`SELECT count(*) AS n, coalesce(sum(fail_count > 0), 0) AS failed, coalesce(sum(fail_count >= 2), 0) AS gaveUp
      FROM block_embeddings WHERE ok = 0 AND ignored IS NULL`).get() as { n: number; failed: number; gaveUp: number };
    const same = (step: string) => {
      const { n, failed, gaveUp } = recount();
      expect([step, store.todo(2)]).toEqual([step, { pending: n - failed, failed, gaveUp }]);
    };
    for (const id of ['a', 'b', 'c', 'd']) store.insert(id, `h${id}`, null);
    store.insert('e', 'he', 'type');
    same('inserted');
    const key = (id: string) => store.rowsOf([id]).get(id)!.key;
    store.markFailed([key('c')], 1, 'down');
    store.markFailed([key('c'), key('d')], 2, 'down');
    same('failed');
    store.writeVector(key('a'), 'ha', 'ha', 'm', vectorToBlob(new Float32Array([1, 0])), 2, false, 'm');
    same('embedded');
    store.update(key('a'), 'ha2', null, 'm');
    store.update(key('b'), 'hb', 'length', 'm');
    same('changed and ignored');
    store.delete(key('d'));
    same('deleted');
    expect(() => store.transaction(() => { store.insert('d', 'hd', null); throw new Error('rolled back'); })).toThrow('rolled back');
    same('rolled back');
    store.retryFailed();
    same('retried');
    store.writeVector(key('c'), 'hc', 'hc', 'm', vectorToBlob(new Float32Array([0, 1])), 2, false, 'm');
    store.reindex();
    same('reindexed');
    // A row changed after a reindex, before it was embedded again, is due again (its vector's hash is gone).
    store.update(key('c'), 'hc2', null, 'm');
    same('changed after a reindex');
    expect(store.due(10, { ...retry, maxFailures: 5 }, 10).map((row) => row.block_id)).toContain('c');
    store.activateModel('other');
    same('model changed');
    // A store whose triggers were lost is counted again at open.
    store.db.exec('DROP TRIGGER block_embeddings_todo_changed; UPDATE todo_count SET n = 99, failed = 7');
    store.close();
    const again = new EmbeddingStore(file, join(file, '..', 'quire.db'));
    const { n, failed } = again.db.prepare('SELECT count(*) AS n, coalesce(sum(fail_count > 0), 0) AS failed FROM block_embeddings WHERE ok = 0 AND ignored IS NULL').get() as { n: number; failed: number };
    expect(again.todo(2)).toEqual({ pending: n - failed, failed, gaveUp: 0 });
    again.close();
  });

  it('keeps the keys given out by a version 1 store whose rows were all deleted', () => {
    const folder = mkdtempSync(join(tmpdir(), 'quire-store-v1-empty-'));
    folders.push(folder);
    const blocksFile = join(folder, 'quire.db');
    new Database(blocksFile).exec('CREATE TABLE blocks (id TEXT NOT NULL UNIQUE, root_id TEXT, notebook TEXT, path TEXT, hpath TEXT, type TEXT, subtype TEXT, content TEXT)');
    const old = new Database(join(folder, 'embeddings.db'));
    old.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID; INSERT INTO meta VALUES ('version', '1');
      CREATE TABLE block_embeddings (key INTEGER PRIMARY KEY AUTOINCREMENT, block_id TEXT NOT NULL UNIQUE, hash TEXT NOT NULL, model TEXT, dimensions INTEGER,
        vector_hash TEXT, vector BLOB, remote INTEGER NOT NULL DEFAULT 0, ok INTEGER NOT NULL DEFAULT 0, fail_count INTEGER NOT NULL DEFAULT 0,
        last_tried INTEGER NOT NULL DEFAULT 0, last_error TEXT, ignored TEXT, seq INTEGER NOT NULL);
      CREATE TABLE removed_keys (key INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
      INSERT INTO block_embeddings (block_id, hash, seq) VALUES ('x', 'h', 1), ('y', 'h', 2);
      DELETE FROM block_embeddings;
      -- A downgrade's leftover: vectors of keys given since to other blocks.
      CREATE TABLE embedding_vectors (key INTEGER PRIMARY KEY, vector BLOB NOT NULL);
      INSERT INTO embedding_vectors VALUES (1, x'00000000');`);
    old.close();
    const store = new EmbeddingStore(join(folder, 'embeddings.db'), blocksFile);
    store.insert('z', 'h', null);
    expect(store.rowsOf(['z']).get('z')!.key).toBe(3);
    expect(store.db.prepare('SELECT count(*) FROM embedding_vectors').pluck().get()).toBe(0);
    store.close();
  });
});

describe('the ignore rules', () => {
  const block = { id: 'x', notebook: 'nb', path: 'nb/doc/child.json', hpath: '/Journal/Day', type: 'paragraph', content: 'long enough text' };
  it('ignores by path of ids, title path, type and length in characters, not bytes', () => {
    expect(ignoreRules({ paths: ['nb'] }).reason(block, false)).toBe('path');
    expect(ignoreRules({ paths: ['doc'] }).reason(block, false)).toBe('path');
    expect(ignoreRules({ paths: ['nb/doc'] }).reason(block, false)).toBe('path');
    expect(ignoreRules({ paths: ['nb/other'] }).reason(block, false)).toBeNull();
    expect(ignoreRules({ paths: ['/Journal'] }).reason(block, false)).toBe('path');
    expect(ignoreRules({ paths: ['/Jour'] }).reason(block, false)).toBeNull();
    expect(ignoreRules({ types: ['paragraph'] }).reason(block, false)).toBe('type');
    // Four CJK characters are twelve UTF-8 bytes: counted as four.
    expect(ignoreRules({ minChars: 4, maxChars: 4 }).reason({ ...block, content: '读书写作' }, false)).toBeNull();
    expect(ignoreRules({ minChars: 5 }).reason({ ...block, content: '读书写作' }, false)).toBe('length');
    expect(ignoreRules({ minChars: 1, maxChars: 3 }).reason({ ...block, content: '😀😀😀' }, false)).toBeNull();
    expect(ignoreRules({ minChars: 1, maxChars: 3 }).reason({ ...block, content: '😀😀😀😀' }, false)).toBe('length');
    expect(ignoreRules().reason(block, true)).toBe('local-only');
    expect(characters('a😀b')).toBe(3);
  });
});
