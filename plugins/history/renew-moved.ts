import type Database from 'better-sqlite3';
import { newId } from '../../core/index.js';
import type { Block } from '../blocks/block-model.js';
import { documentBytes } from '../blocks/document-bytes.js';

/** A block of a version given a new id as it is put back: its own is another document's block now. */
export interface RenewedBlock { id: string; was: string; in: string }

/**
 * A version's text with every block that is in another document now (moved there after the version was
 * kept) under a new id, and which ones. A version that does not parse is left as it is (the restore
 * writes it, and the index reports it, as before).
 */
export function renewMoved(text: string, documentId: string, reader: Database.Database): { text: string; renewed: RenewedBlock[] } {
  let root: Block;
  try {
    root = JSON.parse(text) as Block;
  } catch {
    return { text, renewed: [] };
  }
  const blocks: Block[] = [];
  const walk = (block: Block): void => {
    for (const child of block.children ?? []) {
      blocks.push(child);
      walk(child);
    }
  };
  walk(root);
  if (blocks.length === 0) return { text, renewed: [] };
  const whereNow = reader.prepare('SELECT root_id FROM blocks WHERE id = ?').pluck();
  const renewed: RenewedBlock[] = [];
  for (const block of blocks) {
    const now = whereNow.get(block.id) as string | undefined;
    if (now === undefined || now === documentId) continue;
    const id = newId();
    renewed.push({ id, was: block.id, in: now });
    block.id = id;
  }
  return renewed.length === 0 ? { text, renewed } : { text: documentBytes(root).toString('utf8'), renewed };
}
