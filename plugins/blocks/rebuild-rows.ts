/**
 * A full rebuild's documents read, parsed, validated and derived into index rows on a parse worker, so
 * that the main thread only runs inserts (workspace-sync.ts). Pure, the same on a worker and inline.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseDocumentText } from './document-file.js';
import { prepareBlocks, type PreparedRows } from './import-rows.js';
import { countBlocks } from './tree-ops.js';

export interface RebuildDocWork {
  id: string;
  /** Absolute path of the document file. */
  file: string;
}

/**
 * A document's rows, without the place columns (the main thread adds them; the hpath depends on titles
 * above it that it learns as it goes). `missing`: the file went away since the scan.
 */
export type RebuiltDocument =
  | { id: string; ok: true; rows: PreparedRows; count: number; mtimeMs: number; size: number }
  | { id: string; ok: false; pointer: string; message: string }
  | { id: string; missing: true };

export function prepareRebuild(docs: readonly RebuildDocWork[]): RebuiltDocument[] {
  return docs.map((doc): RebuiltDocument => {
    let text: string;
    let mtimeMs: number;
    let size: number;
    try {
      // Stated before the read as well: a save between the read and a stat after it recorded the new
      // size and time against the old text, and no later sync looked at the file again. Different, the
      // earlier is kept, so the next sync sees the file changed and reads it again.
      const before = statSync(doc.file);
      text = readFileSync(doc.file, 'utf8');
      const after = statSync(doc.file);
      ({ mtimeMs, size } = before.mtimeMs === after.mtimeMs && before.size === after.size ? after : before);
    } catch {
      return { id: doc.id, missing: true };
    }
    const parsed = parseDocumentText(text, doc.id);
    if (!parsed.ok) {
      const issue = parsed.issues[0]!;
      return { id: doc.id, ok: false, pointer: issue.pointer, message: issue.message };
    }
    const root = parsed.value;
    const rows: PreparedRows = { id: doc.id, title: root.content ?? '', blocks: prepareBlocks(root) };
    return { id: doc.id, ok: true, rows, count: countBlocks(root), mtimeMs, size };
  });
}
