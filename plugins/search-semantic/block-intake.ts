import * as crypto from 'node:crypto';
import type { BlocksIndex } from '../blocks/tokens.js';
import type { EmbeddingStore, StoredRow } from './embedding-store.js';
import type { BlockFacts, IgnoreRules } from './ignore-rules.js';
import { localOnlyAmong } from '../../core/index.js';

const PAGE = 2_000;
const FACTS = 'id, notebook, path, hpath, type, content';

export interface IntakeContext {
  store: EmbeddingStore;
  blocks: BlocksIndex;
  rules: IgnoreRules;
  /** Whether the embedder in use sends texts off the machine (its effects include dataEgress). */
  remote(): boolean;
  /** The model id whose vectors are current. */
  activeModel(): string;
}

/** One-shot `crypto.hash` where Node has it (20.12+): about half the cost of a Hash object per text. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;

export function textHash(text: string): string {
  return oneShot ? oneShot('sha1', text, 'base64') : crypto.createHash('sha1').update(text).digest('base64');
}

/**
 * Brings the store's rows in line with the blocks index: a row per block, its text's hash, and why it
 * is ignored if it is. Drops a vector that must not stay: of an ignored block, or made by a remote
 * embedder for a block now in a local-only notebook (moved there, or the notebook marked so).
 * Synchronous and small per call (the ids of one committed write, or one page of a comparison).
 */
export class BlockIntake {
  constructor(private readonly ctx: IntakeContext) {}

  /** Re-checks these blocks; returns how many rows changed. */
  checkIds(ids: readonly string[]): number {
    let changed = 0;
    for (let start = 0; start < ids.length; start += PAGE) {
      const slice = ids.slice(start, start + PAGE);
      const facts = this.ctx.store.prepared(`SELECT ${FACTS} FROM blk.blocks WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(slice)) as BlockFacts[];
      const present = new Set(facts.map((fact) => fact.id));
      changed += this.apply(facts, slice.filter((id) => !present.has(id)));
    }
    return changed;
  }

  /** Re-checks every block of these documents (moved, or inserted in bulk). */
  checkDocuments(documents: readonly string[]): number {
    let changed = 0;
    for (const document of documents) {
      const facts = this.ctx.store.prepared(`SELECT ${FACTS} FROM blk.blocks WHERE root_id = ?`).all(document) as BlockFacts[];
      changed += this.apply(facts, []);
    }
    return changed;
  }

  /** Re-checks every block of these notebooks (their egress flag may have changed). */
  checkNotebooks(notebooks: readonly string[]): number {
    let changed = 0;
    for (const notebook of notebooks) {
      let after = -1;
      for (;;) {
        const rows = this.ctx.store.prepared(`SELECT rowid, ${FACTS} FROM blk.blocks WHERE notebook = ? AND rowid > ? ORDER BY rowid LIMIT ${PAGE}`).all(notebook, after) as (BlockFacts & { rowid: number })[];
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.rowid;
        changed += this.apply(rows, []);
      }
    }
    return changed;
  }

  /**
   * Compares every block with the store, a page at a time (yielding between pages), then drops the rows
   * of blocks that are gone: what changed while the kernel was down, after a rebuild, or after a change
   * of the embedder or of the ignore rules.
   */
  async reconcile(stopped: () => boolean = () => false): Promise<number> {
    let changed = 0;
    let after = -1;
    for (;;) {
      if (stopped()) return changed;
      // The block and its store row in one read (a join), not a lookup of the page's ids afterwards.
      const rows = this.ctx.store.prepared(`SELECT b.rowid AS rowid, b.id, b.notebook, b.path, b.hpath, b.type, b.content,
          e.key, e.block_id, e.hash, e.model, e.vector_hash, e.has_vector, e.remote, e.ignored
        FROM blk.blocks b LEFT JOIN block_embeddings e ON e.block_id = b.id WHERE b.rowid > ? ORDER BY b.rowid LIMIT ${PAGE}`)
        .all(after) as (BlockFacts & { rowid: number } & ({ key: null } | StoredRow))[];
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.rowid;
      const stored = new Map<string, StoredRow>();
      for (const row of rows) if (row.key !== null) stored.set(row.id, row as StoredRow);
      changed += this.apply(rows, [], stored);
      await new Promise((resolve) => setImmediate(resolve));
    }
    let afterKey = 0;
    for (;;) {
      if (stopped()) return changed;
      const gone = this.ctx.store.prepared(`SELECT e.key, e.block_id FROM block_embeddings e WHERE e.key > ? AND NOT EXISTS (SELECT 1 FROM blk.blocks b WHERE b.id = e.block_id)
        ORDER BY e.key LIMIT ${PAGE}`).all(afterKey) as { key: number; block_id: string }[];
      if (gone.length === 0) break;
      afterKey = gone[gone.length - 1]!.key;
      // Checked again by id: a block written since the page was read is kept.
      changed += this.checkIds(gone.map((row) => row.block_id));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return changed;
  }

  /** `known`: the store rows of these blocks when the caller read them already (else looked up here). */
  private apply(facts: readonly BlockFacts[], missing: readonly string[], known?: ReadonlyMap<string, StoredRow>): number {
    const { store, rules } = this.ctx;
    const notebooks = this.ctx.blocks.notebooks();
    const remote = this.ctx.remote();
    const model = this.ctx.activeModel();
    const rows = known ?? store.rowsOf([...facts.map((fact) => fact.id), ...missing]);
    let changed = 0;
    store.transaction(() => {
      for (const id of missing) {
        const row = rows.get(id);
        if (row) { store.delete(row.key); changed++; }
      }
      const localOnlySet = localOnlyAmong(notebooks);
      for (const fact of facts) {
        const localOnly = localOnlySet.has(fact.notebook);
        const reason = rules.reason(fact, localOnly && remote);
        const hash = textHash(fact.content);
        const row = rows.get(fact.id);
        if (!row) {
          store.insert(fact.id, hash, reason);
          changed++;
          continue;
        }
        // A vector made remotely from a local-only notebook's text is dropped whoever embeds now.
        if (row.has_vector === 1 && (reason !== null || (localOnly && row.remote === 1))) { store.dropVector(row.key); changed++; }
        if (row.hash !== hash || row.ignored !== reason || (row.has_vector === 1 && reason !== null)) { store.update(row.key, hash, reason, model); changed++; }
      }
    });
    return changed;
  }
}
