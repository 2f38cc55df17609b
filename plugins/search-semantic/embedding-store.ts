import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { IgnoredReason } from './ignore-rules.js';
import { countedRows, countedTodo, installRowCount } from './row-count.js';
import { migrateFromV1 } from './store-migration.js';

/**
 * Bumped when the tables change; a store of an unknown version is emptied (vectors are embedded again).
 * Version 1 kept each vector in its block_embeddings row; it is migrated in place (no vector is lost).
 */
const STORE_VERSION = '2';

/**
 * `block_embeddings`: one row per block the indexer knows. `key` is the HNSW key (AUTOINCREMENT: a key
 * is never reused, so a stale key left in the graph can never name another block). `hash` is the hash
 * of the block's text as last seen, `vector_hash` that of the text the vector was made from. `ok` = the
 * row needs nothing (a vector of the active model for the current text); a partial index over the rows
 * that do need something keeps the pending queue and counts cheap at any size. `seq` increases with
 * every change the HNSW index must follow; deleted keys go to `removed_keys` with theirs.
 * The vectors themselves are in `embedding_vectors` (`has_vector` says one is there): a row of
 * block_embeddings is then about 150 bytes, not a 4 KiB page, and what reads every row (the comparison
 * with the notes at each start, the counts, a filter's candidates) reads 150 MB at 1M blocks, not 4 GB
 * that a cold cache fetched in random 4 KiB reads for minutes, holding the event loop.
 */
const BLOCK_EMBEDDINGS = `CREATE TABLE IF NOT EXISTS block_embeddings (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  block_id TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  model TEXT,
  dimensions INTEGER,
  vector_hash TEXT,
  has_vector INTEGER NOT NULL DEFAULT 0,
  remote INTEGER NOT NULL DEFAULT 0,
  ok INTEGER NOT NULL DEFAULT 0,
  fail_count INTEGER NOT NULL DEFAULT 0,
  last_tried INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  ignored TEXT,
  seq INTEGER NOT NULL
);`;

const TABLES = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
${BLOCK_EMBEDDINGS}
DROP INDEX IF EXISTS block_embeddings_todo;
-- In the order due() reads: the next batch is the first rows of this index, not a sort of every pending row.
CREATE INDEX IF NOT EXISTS block_embeddings_due ON block_embeddings (fail_count, key DESC) WHERE ok = 0 AND ignored IS NULL;
CREATE INDEX IF NOT EXISTS block_embeddings_ignored ON block_embeddings (ignored) WHERE ignored IS NOT NULL;
CREATE INDEX IF NOT EXISTS block_embeddings_seq ON block_embeddings (seq);
CREATE INDEX IF NOT EXISTS block_embeddings_model ON block_embeddings (model, dimensions) WHERE has_vector = 1;
-- Rows to do that still hold a vector (of another model, or of an older text): the status's stale count and
-- a query's note read this, not every row to do (a million right after a change of model or a first start).
CREATE INDEX IF NOT EXISTS block_embeddings_stale ON block_embeddings (model) WHERE ok = 0 AND ignored IS NULL AND has_vector = 1;
CREATE TABLE IF NOT EXISTS removed_keys (key INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embedding_vectors (key INTEGER PRIMARY KEY, vector BLOB NOT NULL);
`;

/** Rows to do that hold a vector of another model than `?`: the terms of block_embeddings_stale, so SQLite reads that index alone. */
export const STALE_WHERE = 'ok = 0 AND ignored IS NULL AND has_vector = 1 AND model IS NOT ?';
/**
 * STALE_WHERE as ranges of its partial index, below and above the model (and none): `model IS NOT ?` read every
 * entry of the index, which holds every row to do that has a vector, stale or not (60-70 ms at a million
 * after a reindex, for none stale; and hasStale runs for every query's note while anything is to do).
 * A row with a vector names its model; one without (a store of an older version) counts too, as before.
 */
const STALE_RANGES = ['model < ?', 'model > ?', 'model IS NULL AND ? IS NOT NULL']
  .map((range) => `(SELECT 1 FROM block_embeddings WHERE ok = 0 AND ignored IS NULL AND has_vector = 1 AND ${range})`);

export interface StoredRow {
  key: number;
  block_id: string;
  hash: string;
  model: string | null;
  vector_hash: string | null;
  has_vector: 0 | 1;
  remote: 0 | 1;
  ignored: IgnoredReason | null;
}

/** A block due for embedding, with its text as the blocks index holds it now. */
export interface DueBlock {
  key: number;
  block_id: string;
  hash: string;
  notebook: string;
  content: string;
}

export interface StoreCounts {
  total: number;
  indexed: number;
  pending: number;
  failed: number;
  gaveUp: number;
  stale: number;
  ignored: Record<IgnoredReason, number>;
}

export interface SeqChange {
  key: number;
  seq: number;
  model: string | null;
  dimensions: number | null;
  vector: Buffer | null;
}

/**
 * The vectors of the blocks, in `<workspace>/index/embeddings.db`, beside the blocks index (which is
 * rebuilt from the files at times: the vectors must survive that). The blocks index is attached
 * read-only as `blk`, so candidates are selected by a join on the block id.
 */
export class EmbeddingStore {
  readonly db: Database.Database;
  private seqValue: number;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(file: string, blocksFile: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // The store is derived too (from the files and the embedder): a crash may lose the last batches,
    // which are embedded again; no fsync per batch.
    this.db.pragma('synchronous = NORMAL');
    // A statement that fires a trigger (the row count's, row-count.ts) keeps a statement journal of the
    // pages it changes, in a temporary file by default: an insert took 13-20 µs against 5.5 without the
    // triggers. This connection makes no large temporary tables or sorts for memory to hold instead.
    this.db.pragma('temp_store = MEMORY');
    const version = this.hasMeta() ? this.db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as string | undefined : undefined;
    if (version === '1') {
      migrateFromV1(this.db, BLOCK_EMBEDDINGS, STORE_VERSION);
    } else if (version !== undefined && version !== STORE_VERSION) {
      this.db.exec('DROP TABLE IF EXISTS block_embeddings; DROP TABLE IF EXISTS removed_keys; DROP TABLE IF EXISTS embedding_vectors; DROP TABLE IF EXISTS meta;');
    }
    this.db.exec(TABLES);
    installRowCount(this.db);
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)").run(STORE_VERSION);
    // Read only by this code (better-sqlite3 has no URI filenames for mode=ro): never written through here.
    this.db.prepare('ATTACH DATABASE ? AS blk').run(blocksFile);
    this.seqValue = this.maxSeq();
  }

  private hasMeta(): boolean {
    return this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  }

  prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, statement = this.db.prepare(sql));
    return statement;
  }

  /** The next change sequence (in a transaction of the caller's). */
  nextSeq(): number {
    return ++this.seqValue;
  }

  maxSeq(): number {
    // With the floor kept when removed keys are forgotten: the last change may have been one of them.
    const row = this.db.prepare(`SELECT max((SELECT coalesce(max(seq), 0) FROM block_embeddings), (SELECT coalesce(max(seq), 0) FROM removed_keys),
      (SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM meta WHERE key = 'seqFloor')) AS seq`).get() as { seq: number };
    return row.seq;
  }

  meta(key: string): string | undefined {
    return this.prepared('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string | undefined;
  }

  setMeta(key: string, value: string): void {
    this.prepared('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /**
   * Reads a meta value and removes it, the removal synced to disk before returning (not left to the next
   * checkpoint): a value that must hold for one start only is gone even if the machine then loses power.
   */
  takeMeta(key: string): string | undefined {
    const value = this.meta(key);
    if (value === undefined) return undefined;
    this.db.pragma('synchronous = FULL');
    try {
      this.prepared('DELETE FROM meta WHERE key = ?').run(key);
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
    return value;
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  rowsOf(ids: readonly string[]): Map<string, StoredRow> {
    const rows = this.prepared(`SELECT key, block_id, hash, model, vector_hash, has_vector, remote, ignored
      FROM block_embeddings WHERE block_id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as StoredRow[];
    return new Map(rows.map((row) => [row.block_id, row]));
  }

  insert(blockId: string, hash: string, ignored: IgnoredReason | null): void {
    this.prepared('INSERT INTO block_embeddings (block_id, hash, ignored, seq) VALUES (?, ?, ?, ?)').run(blockId, hash, ignored, this.nextSeq());
  }

  /**
   * The block's text or its reason to be ignored changed: it needs embedding (again) unless ignored. A
   * vector of the text is current only at the size the model answers now (a text edited and put back
   * while the store was embedded again at a new size was taken for done at the old one, and never found).
   */
  update(key: number, hash: string, ignored: IgnoredReason | null, activeModel: string): void {
    this.prepared(`UPDATE block_embeddings SET hash = @hash, ignored = @ignored,
        ok = (has_vector = 1 AND vector_hash IS @hash AND model IS @model AND (@dimensions IS NULL OR dimensions IS @dimensions)),
        fail_count = CASE WHEN hash = @hash THEN fail_count ELSE 0 END, last_tried = CASE WHEN hash = @hash THEN last_tried ELSE 0 END
      WHERE key = @key`).run({ hash, ignored, model: activeModel, dimensions: this.dimensionsOf(activeModel) ?? null, key });
  }

  /** Drops a row's vector (ignored now, or made remotely for a notebook now local-only). */
  dropVector(key: number): void {
    this.prepared('UPDATE block_embeddings SET has_vector = 0, vector_hash = NULL, model = NULL, dimensions = NULL, remote = 0, ok = 0, seq = ? WHERE key = ?').run(this.nextSeq(), key);
    this.prepared('DELETE FROM embedding_vectors WHERE key = ?').run(key);
  }

  delete(key: number): void {
    this.prepared('DELETE FROM block_embeddings WHERE key = ?').run(key);
    this.prepared('DELETE FROM embedding_vectors WHERE key = ?').run(key);
    this.prepared('INSERT OR REPLACE INTO removed_keys (key, seq) VALUES (?, ?)').run(key, this.nextSeq());
  }

  /** The blocks due now, fewest failures first, with their current text; joined so a removed block is never sent. */
  due(now: number, retry: { baseMs: number; maxMs: number; maxFailures: number }, limit: number): DueBlock[] {
    return this.prepared(`SELECT e.key, e.block_id, e.hash, b.notebook, b.content FROM block_embeddings e JOIN blk.blocks b ON b.id = e.block_id
      WHERE e.ok = 0 AND e.ignored IS NULL AND e.fail_count < @maxFailures AND (e.fail_count = 0 OR e.last_tried + min(@baseMs << (e.fail_count - 1), @maxMs) <= @now)
      ORDER BY e.fail_count, e.key DESC LIMIT @limit`).all({ maxFailures: retry.maxFailures, baseMs: retry.baseMs, maxMs: retry.maxMs, now, limit }) as DueBlock[];
  }

  /** When the next block that is backing off becomes due, if any. */
  nextDue(retry: { baseMs: number; maxMs: number; maxFailures: number }): number | undefined {
    const at = this.prepared(`SELECT min(last_tried + min(@baseMs << (fail_count - 1), @maxMs)) FROM block_embeddings
      WHERE ok = 0 AND ignored IS NULL AND fail_count > 0 AND fail_count < @maxFailures`).pluck().get({ baseMs: retry.baseMs, maxMs: retry.maxMs, maxFailures: retry.maxFailures }) as number | null;
    return at ?? undefined;
  }

  /**
   * Stores a vector for the text whose hash is `textHash`. `rowHash` is the row's hash when the batch was
   * read: if the text changed since (a newer hash recorded), the vector is kept but the row stays due.
   */
  writeVector(key: number, rowHash: string, textHash: string, model: string, vector: Buffer, dimensions: number, remote: boolean, activeModel: string): void {
    const updated = this.prepared(`UPDATE block_embeddings SET hash = CASE WHEN hash = @rowHash THEN @textHash ELSE hash END, vector_hash = @textHash, has_vector = 1,
        model = @model, dimensions = @dimensions, remote = @remote, fail_count = 0, last_tried = 0, last_error = NULL, seq = @seq,
        ok = ((CASE WHEN hash = @rowHash THEN @textHash ELSE hash END) = @textHash AND @model = @activeModel)
      WHERE key = @key AND ignored IS NULL`).run({ rowHash, textHash, model, dimensions, remote: remote ? 1 : 0, seq: this.nextSeq(), activeModel, key });
    // A block deleted while its batch was at the embedder has no row any more, and one ignored meanwhile
    // (moved under an ignored path, its type or notebook ignored since) is to have none: its vector is not
    // kept (it was, and semantic search found the block the person had left out).
    if (updated.changes > 0) this.prepared('INSERT OR REPLACE INTO embedding_vectors (key, vector) VALUES (?, ?)').run(key, vector);
  }

  markFailed(keys: readonly number[], now: number, error: string): void {
    const statement = this.prepared('UPDATE block_embeddings SET fail_count = fail_count + 1, last_tried = ?, last_error = ? WHERE key = ?');
    this.transaction(() => {
      for (const key of keys) statement.run(now, error, key);
      this.setMeta('lastError', error);
    });
  }

  /** Another model is now in use: every row needs its vector (the old ones stay, never compared, until replaced). */
  activateModel(model: string): void {
    this.transaction(() => {
      // At the size the model last answered: a switch back to a model whose size changed while it was
      // not in use took its vectors of the old size for done.
      this.prepared('UPDATE block_embeddings SET ok = (has_vector = 1 AND vector_hash IS hash AND model IS @model AND (@dimensions IS NULL OR dimensions IS @dimensions)), fail_count = 0, last_tried = 0')
        .run({ model, dimensions: this.dimensionsOf(model) ?? null });
      this.setMeta('model', model);
    });
  }

  /**
   * The embedder's vectors now have `dimensions` (its config changed them, the model id the same): the
   * blocks whose vectors have another size are to be embedded again (a query of the new size matched
   * none of them, and nothing said so). Returns whether the size changed; the first size is only noted.
   */
  noteDimensions(model: string, dimensions: number): boolean {
    // Per model: a switch to another model of another size is the model's change (activateModel), not this.
    const key = dimensionsKey(model);
    const known = this.meta(key);
    if (known === String(dimensions)) return false;
    this.transaction(() => {
      if (known !== undefined) this.prepared('UPDATE block_embeddings SET ok = 0, fail_count = 0, last_tried = 0 WHERE model IS ? AND has_vector = 1 AND dimensions IS NOT ?').run(model, dimensions);
      this.setMeta(key, String(dimensions));
    });
    return known !== undefined;
  }

  /** The size the embedder last answered for `model`, if known. */
  dimensionsOf(model: string): number | undefined {
    const known = this.meta(dimensionsKey(model));
    return known === undefined ? undefined : Number(known);
  }

  /** Every block embedded again (reindex): the old vectors answer until replaced. */
  reindex(): void {
    this.prepared('UPDATE block_embeddings SET ok = 0, vector_hash = NULL, fail_count = 0, last_tried = 0').run();
  }

  retryFailed(): number {
    return this.prepared('UPDATE block_embeddings SET fail_count = 0, last_tried = 0 WHERE fail_count > 0 AND ok = 0').run().changes;
  }

  /**
   * Every count (the status action). An ignored row never holds a current vector, so `indexed` is what
   * is neither to do nor ignored: no pass over the rows that are done.
   */
  counts(model: string, maxFailures: number): StoreCounts {
    const total = countedRows(this.db);
    const todo = this.todo(maxFailures);
    const stale = this.prepared(`SELECT ${STALE_RANGES.map((range) => `(SELECT count(*) FROM ${range})`).join(' + ')}`).pluck().get(model, model, model) as number;
    const ignored = this.ignoredCounts();
    const ignoredTotal = Object.values(ignored).reduce((sum, n) => sum + n, 0);
    return { total, indexed: total - todo.pending - todo.failed - ignoredTotal, ...todo, stale, ignored };
  }

  /** The rows, one per block taken in (row-count.ts). */
  rowCount(): number {
    return countedRows(this.db);
  }

  /** The rows to do, from the counts the triggers keep (row-count.ts), and those given up. */
  todo(maxFailures: number): { pending: number; failed: number; gaveUp: number } {
    const { n, failed } = countedTodo(this.db);
    // Those given up: a range of the partial index of rows to do (fail_count first), few unless an embedder failed for long.
    const gaveUp = this.prepared('SELECT count(*) FROM block_embeddings WHERE ok = 0 AND ignored IS NULL AND fail_count >= ?').pluck().get(maxFailures) as number;
    return { pending: n - failed, failed, gaveUp };
  }

  /** Rows to do (not failed, failed), each counted no further than `cap + 1`: ranges of the partial index. */
  todoUpTo(cap: number): { pending: number; failed: number } {
    const pending = this.prepared(`SELECT count(*) FROM (SELECT 1 FROM block_embeddings WHERE ok = 0 AND ignored IS NULL AND fail_count = 0 LIMIT ${cap + 1})`).pluck().get() as number;
    const failed = this.prepared(`SELECT count(*) FROM (SELECT 1 FROM block_embeddings WHERE ok = 0 AND ignored IS NULL AND fail_count > 0 LIMIT ${cap + 1})`).pluck().get() as number;
    return { pending, failed };
  }

  ignoredCounts(): Record<IgnoredReason, number> {
    const ignored: Record<IgnoredReason, number> = { path: 0, type: 0, length: 0, 'local-only': 0 };
    for (const { ignored: reason, n } of this.prepared('SELECT ignored, count(*) AS n FROM block_embeddings WHERE ignored IS NOT NULL GROUP BY ignored').all() as { ignored: IgnoredReason; n: number }[]) ignored[reason] = n;
    return ignored;
  }

  /** Whether some row waits with a vector of another model (stops at the first). */
  hasStale(model: string): boolean {
    return this.prepared(`SELECT ${STALE_RANGES.map((range) => `EXISTS ${range}`).join(' OR ')}`).pluck().get(model, model, model) === 1;
  }

  /** The last error of a failed batch, kept across restarts (meta), cleared by nothing: the failed count says whether it matters now. */
  lastError(): string | undefined {
    return this.meta('lastError');
  }

  /** Changes the HNSW index has not seen: rows with a higher sequence (vector or not) and removed keys. */
  changesSince(seq: number, limit: number): SeqChange[] {
    return this.prepared(`SELECT e.key, e.seq, e.model, e.dimensions, v.vector FROM block_embeddings e LEFT JOIN embedding_vectors v ON v.key = e.key WHERE e.seq > @seq
      UNION ALL SELECT key, seq, NULL, NULL, NULL FROM removed_keys WHERE seq > @seq ORDER BY seq LIMIT @limit`).all({ seq, limit }) as SeqChange[];
  }

  /** Removed keys every saved HNSW file has seen need not be remembered. */
  forgetRemovedUpTo(seq: number): void {
    this.transaction(() => {
      this.prepared('DELETE FROM removed_keys WHERE seq <= ?').run(seq);
      // The sequence reached stays known (maxSeq): a saved graph at it is not taken for one past the store.
      if (seq > Number(this.meta('seqFloor') ?? 0)) this.setMeta('seqFloor', String(seq));
    });
  }

  /** Vectors of a model in key order, after `afterKey` (a rebuild of the HNSW index reads them in pages). */
  vectorsOf(model: string, dimensions: number, afterKey: number, limit: number): { key: number; vector: Buffer }[] {
    return this.prepared(`SELECT e.key, v.vector FROM block_embeddings e JOIN embedding_vectors v ON v.key = e.key
      WHERE e.model = ? AND e.dimensions = ? AND e.has_vector = 1 AND e.key > ? ORDER BY e.key LIMIT ?`)
      .all(model, dimensions, afterKey, limit) as { key: number; vector: Buffer }[];
  }

  vectorCount(model: string, dimensions: number): number {
    return this.prepared('SELECT count(*) FROM block_embeddings WHERE model = ? AND dimensions = ? AND has_vector = 1').pluck().get(model, dimensions) as number;
  }

  close(): void {
    this.db.close();
  }
}

function dimensionsKey(model: string): string {
  return `dimensions:${model}`;
}
