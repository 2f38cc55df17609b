import type Database from 'better-sqlite3';

/**
 * Moves version 1's vectors to their own table and copies the rest of each row to a new
 * block_embeddings, in one transaction (a crash leaves version 1 whole). Once, at the first start
 * after the upgrade: it reads every old row twice and writes each vector once (an update of the old
 * rows in place would rewrite every 4 KiB page, twice). The old table's pages stay free inside the
 * file, for the next vectors.
 */
export function migrateFromV1(db: Database.Database, blockEmbeddings: string, storeVersion: string): void {
  db.transaction(() => {
    const next = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'block_embeddings'").pluck().get() as number | undefined;
    // A table left by a downgrade (version 1 dropped the other tables only) holds vectors of keys since given to other blocks.
    db.exec(`DROP TABLE IF EXISTS embedding_vectors;
      CREATE TABLE embedding_vectors (key INTEGER PRIMARY KEY, vector BLOB NOT NULL);
      INSERT OR REPLACE INTO embedding_vectors (key, vector) SELECT key, vector FROM block_embeddings WHERE vector IS NOT NULL ORDER BY key;
      ${blockEmbeddings.replace('CREATE TABLE IF NOT EXISTS block_embeddings', 'CREATE TABLE block_embeddings_v2')}
      INSERT INTO block_embeddings_v2 (key, block_id, hash, model, dimensions, vector_hash, has_vector, remote, ok, fail_count, last_tried, last_error, ignored, seq)
        SELECT key, block_id, hash, model, dimensions, vector_hash, vector IS NOT NULL, remote, ok, fail_count, last_tried, last_error, ignored, seq FROM block_embeddings ORDER BY key;
      DROP TABLE block_embeddings;
      ALTER TABLE block_embeddings_v2 RENAME TO block_embeddings;
      UPDATE meta SET value = '${storeVersion}' WHERE key = 'version';`);
    // AUTOINCREMENT: a key the old table gave out (its highest maybe deleted since) is never given again.
    // The new table has a row there only if a row was copied (the old one's went with DROP TABLE).
    if (next !== undefined && db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'block_embeddings'").run(next).changes === 0) {
      db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('block_embeddings', ?)").run(next);
    }
  })();
}
