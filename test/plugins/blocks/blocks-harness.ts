import Database from 'better-sqlite3';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { newId } from '../../../core/ids.js';
import { silentLogger } from '../../../core/log.js';
import { BlockIndex } from '../../../plugins/blocks/block-index.js';
import { BlockStore } from '../../../plugins/blocks/block-store.js';
import { DocCatalog } from '../../../plugins/blocks/doc-catalog.js';
import { openIndexDatabase, openIndexReader } from '../../../plugins/blocks/index-schema.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { useHarness, type UserPlugin } from '../../helpers/harness.js';

export const admin: Principal = { kind: 'person', name: 'alice', role: 'admin' };
export const reader: Principal = { kind: 'person', name: 'rita', role: 'reader' };
export const agent = (session = 's1', turn = 't1', call = 'c1'): Principal => ({ kind: 'agent', name: `agent:${session}/${turn}/${call}`, role: 'admin', sessionId: session, turnId: turn });

export interface BlocksBootOptions {
  workspace?: string;
  watch?: boolean;
  welcome?: boolean;
  maxMarkdownChars?: number;
  config?: KernelConfigFile;
  userPlugins?: Record<string, UserPlugin>;
}

/** A kernel with the real native plugins over a temporary workspace, and a terse way to call actions. */
export function useBlocks() {
  const harness = useHarness();
  async function boot(options: BlocksBootOptions = {}) {
    const blocksConfig: Record<string, unknown> = { watch: options.watch ?? false, welcome: options.welcome ?? false };
    if (options.maxMarkdownChars !== undefined) blocksConfig.maxMarkdownChars = options.maxMarkdownChars;
    const kernel = await harness.boot({
      realManifests: true,
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.userPlugins ? { userPlugins: options.userPlugins } : {}),
      config: { ...options.config, plugins: { ...options.config?.plugins, blocks: { config: blocksConfig } } },
    });
    return { kernel, act: actor(kernel) };
  }
  return { ...harness, boot };
}

export type Act = <T = Record<string, unknown>>(target: string, input: Record<string, unknown>, principal?: Principal) => Promise<T>;

export function actor(kernel: Kernel): Act {
  return async <T,>(target: string, input: Record<string, unknown>, principal: Principal = admin): Promise<T> => {
    // An agent's writes stop at the gate; 'auto' stands for the person having allowed the session.
    const outcome = await kernel.pipeline.call({ target, input, principal, ...(principal.kind === 'agent' ? { sessionMode: 'auto' as const } : {}) });
    if (outcome.status !== 'ok') throw new Error(`${target} asked for a confirmation`);
    return outcome.value as T;
  };
}

/** Every row of every index table in a stable order, without rowids: what a rebuild must reproduce. */
export function dumpIndex(workspace: string): Record<string, unknown[]> {
  const db = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
  try {
    const out: Record<string, unknown[]> = {};
    for (const [table, order] of [['notebooks', 'id'], ['documents', 'id'], ['blocks', 'id'], ['attributes', 'block_id, name'], ['refs', 'block_id, ordinal'], ['tags', 'block_id, tag']] as const) {
      out[table] = db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all();
    }
    // The search's narrow row per block, by block id (rowids differ after a rebuild): one per block, same document and notebook.
    out.block_docs = db.prepare('SELECT b.id, m.root_id, m.notebook FROM block_docs m LEFT JOIN blocks b ON b.rowid = m.rowid ORDER BY b.id').all();
    out.blocks_without_docs = db.prepare('SELECT b.id FROM blocks b WHERE NOT EXISTS (SELECT 1 FROM block_docs m WHERE m.rowid = b.rowid) ORDER BY b.id').all();
    return out;
  } finally {
    db.close();
  }
}

/** A block store alone (no kernel) over `folder`, with one private notebook; `db` is its index's writer. */
export async function bareStore(folder: string): Promise<{ store: BlockStore; db: Database.Database; notebook: string }> {
  const dataDir = join(folder, 'data');
  const indexFile = join(folder, 'index', 'quire.db');
  const { db } = openIndexDatabase(indexFile);
  const store = new BlockStore(dataDir, new BlockIndex(db, openIndexReader(indexFile)), new DocCatalog(), silentLogger);
  const notebook = newId();
  await mkdir(join(dataDir, notebook), { recursive: true });
  store.catalog.notebooks.set(notebook, { name: 'N', icon: '', sort: 0, access: 'private' });
  return { store, db, notebook };
}
