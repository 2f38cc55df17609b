import type Database from 'better-sqlite3';
import { newId } from '../../core/index.js';
import type { Block } from '../blocks/block-model.js';
import { documentBytes } from '../blocks/document-bytes.js';
import { parseDocumentText } from '../blocks/document-file.js';

/**
 * A block of a version given a new id as it is put back: its own is another document's block now.
 * `was` and `in` only where the caller may see that document (`visibleTo`, core's answer through blocks): its ids are not told otherwise.
 */
export interface RenewedBlock { id: string; was?: string; in?: string }

/**
 * A version's text with every block that is in another document now (moved there after the version was
 * kept) under a new id, and which ones. A version that is not a valid document (cut short, edited by
 * hand) is left as it is: the restore writes it, and the index reports it, as before.
 */
export function renewMoved(text: string, documentId: string, reader: Database.Database, visibleTo: (notebook: string) => boolean): { text: string; renewed: RenewedBlock[] } {
  const parsed = parseDocumentText(text, documentId);
  if (!parsed.ok) return { text, renewed: [] };
  const whereNow = reader.prepare('SELECT root_id, notebook FROM blocks WHERE id = ?');
  const renewed: RenewedBlock[] = [];
  // A stack, not recursion: a version is a file of the workspace, as deep as its limit allows.
  const stack: Block[] = [...(parsed.value.children ?? [])];
  while (stack.length > 0) {
    const block = stack.pop()!;
    if (block.children) stack.push(...block.children);
    const now = whereNow.get(block.id) as { root_id: string; notebook: string } | undefined;
    if (now === undefined || now.root_id === documentId) continue;
    const id = newId();
    renewed.push(visibleTo(now.notebook) ? { id, was: block.id, in: now.root_id } : { id });
    block.id = id;
  }
  return renewed.length === 0 ? { text, renewed } : { text: documentBytes(parsed.value).toString('utf8'), renewed };
}
