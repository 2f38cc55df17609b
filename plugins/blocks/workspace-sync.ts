import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidId } from '../../core/index.js';
import type { BlockStore } from './block-store.js';
import type { DocEntry } from './doc-catalog.js';
import { parseDocumentText } from './document-file.js';
import { NOTEBOOK_CONF_FILE, parseNotebookConf, type NotebookConf } from './notebook-conf.js';

interface FoundDoc {
  id: string;
  notebook: string;
  parent: string | null;
  file: string;
  relativePath: string;
}

export interface SyncReport {
  notebooks: number;
  documents: number;
  /** Documents whose rows were (re)written. */
  indexed: number;
  blocks: number;
  removed: number;
  problems: { path: string; reason: string }[];
}

export interface SyncOptions {
  /** Reindex every document, not only those whose size or mtime changed (a rebuild). */
  full?: boolean;
  onProgress?(done: number, total: number): void;
}

/**
 * Brings the catalog and the index in line with data/: what the files say wins. A file that does not
 * parse is reported (path and reason) and left on disk untouched; its rows leave the index.
 */
export async function syncWithFiles(store: BlockStore, options: SyncOptions = {}): Promise<SyncReport> {
  // One transaction for the whole sync: a rebuild is never seen half done, and it is much faster.
  const { db } = store.index;
  db.exec('BEGIN IMMEDIATE');
  try {
    const report = await syncInTransaction(store, options);
    db.exec('COMMIT');
    return report;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    store.index.forgetKnown();
    throw error;
  }
}

async function syncInTransaction(store: BlockStore, options: SyncOptions): Promise<SyncReport> {
  const { catalog, index } = store;
  const problems = new Map<string, string>();
  const notebooks = await scanNotebooks(store.dataDir, problems);
  const found: FoundDoc[] = [];
  for (const notebook of notebooks.keys()) await scanFolder(store.dataDir, notebook, null, [notebook], found, problems);
  if (options.full) index.clear();
  const known = new Map(index.allDocuments().map((doc) => [doc.id, doc]));
  const present = new Set(found.map((doc) => doc.id));
  for (const [id, conf] of notebooks) {
    catalog.notebooks.set(id, conf);
    index.writeNotebook(id, conf);
  }
  for (const id of [...catalog.notebooks.keys()]) if (!notebooks.has(id)) catalog.notebooks.delete(id);
  for (const id of index.notebookIds()) if (!notebooks.has(id)) index.removeNotebook(id);
  // Catalog first (titles from the index where a file is unchanged), so hpaths resolve for every document.
  for (const entry of [...catalog.allDocs()]) if (!present.has(entry.id)) catalog.deleteDoc(entry.id);
  const changed: FoundDoc[] = [];
  for (const doc of found) {
    const info = await stat(doc.file);
    const record = known.get(doc.id);
    const same = record && record.mtime_ms === Math.trunc(info.mtimeMs) && record.size === info.size && record.path === doc.relativePath;
    catalog.setDoc({ id: doc.id, notebook: doc.notebook, parent: doc.parent, title: same ? record.title : catalog.doc(doc.id)?.title ?? '' });
    if (!same || options.full) changed.push(doc);
  }
  let blocks = 0;
  let removed = 0;
  let failed = 0;
  for (const [id] of known) if (!present.has(id)) { index.removeDocument(id); removed++; }
  const retitled: string[] = [];
  // A fixed order, so that an id found in two files (copied by hand) always ends up the same way.
  changed.sort((a, b) => depth(a) - depth(b) || (a.relativePath < b.relativePath ? -1 : 1));
  const changedIds = new Set(changed.map((doc) => doc.id));
  for (const [i, doc] of changed.entries()) {
    const text = await readFile(doc.file, 'utf8');
    const parsed = parseDocumentText(text, doc.id);
    if (!parsed.ok) {
      const issue = parsed.issues[0]!;
      problems.set(doc.relativePath, `${issue.pointer || '/'}: ${issue.message}`);
      index.removeDocument(doc.id);
      failed++;
      continue;
    }
    const entry: DocEntry = { id: doc.id, notebook: doc.notebook, parent: doc.parent, title: parsed.value.content ?? '' };
    const record = known.get(doc.id);
    if (record && record.title !== entry.title) retitled.push(doc.id);
    catalog.setDoc(entry);
    const taken = index.writeDocument(parsed.value, store.placeOf(doc.id), doc.parent, await stat(doc.file));
    // Taking a block over from a document this sync has not rewritten means its id is in two files.
    for (const block of taken) {
      if (options.full || !changedIds.has(block.from)) problems.set(doc.relativePath, `block ${block.id} also appears in document ${block.from}; give one of them a new id`);
    }
    store.forget(doc.id);
    blocks += countBlocks(parsed.value);
    options.onProgress?.(i + 1, changed.length);
  }
  // A title edited by hand changes the hpath of every document below it.
  const done = new Set(changed.map((doc) => doc.id));
  for (const id of retitled) {
    for (const below of catalog.subtree(id)) if (!done.has(below.id)) { done.add(below.id); await store.reindex(below.id); }
  }
  store.problems.clear();
  for (const [path, reason] of problems) {
    store.problems.set(path, reason);
    store.log.warn('skipped a file that is not a valid document or notebook', { path, reason });
  }
  return { notebooks: notebooks.size, documents: found.length, indexed: changed.length - failed, blocks, removed, problems: [...problems].map(([path, reason]) => ({ path, reason })) };
}

async function scanNotebooks(dataDir: string, problems: Map<string, string>): Promise<Map<string, NotebookConf>> {
  const out = new Map<string, NotebookConf>();
  const entries = await readdir(dataDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory() || !isValidId(entry.name)) continue;
    const file = join(dataDir, entry.name, NOTEBOOK_CONF_FILE);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) {
      problems.set(`${entry.name}/${NOTEBOOK_CONF_FILE}`, 'missing: the folder is not a notebook');
      continue;
    }
    const parsed = parseNotebookConf(text);
    if (parsed.ok) out.set(entry.name, parsed.value);
    else problems.set(`${entry.name}/${NOTEBOOK_CONF_FILE}`, parsed.message);
  }
  return out;
}

async function scanFolder(dataDir: string, notebook: string, parent: string | null, parts: string[], found: FoundDoc[], problems: Map<string, string>): Promise<void> {
  const folder = join(dataDir, ...parts);
  const entries = await readdir(folder, { withFileTypes: true });
  const docs = new Set<string>();
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.json') || entry.name.startsWith('.')) continue;
    const id = entry.name.slice(0, -'.json'.length);
    const relativePath = [...parts, entry.name].join('/');
    if (!isValidId(id)) { problems.set(relativePath, 'the file name is not a document id (YYYYMMDDhhmmss-xxxxxxx.json)'); continue; }
    docs.add(id);
    found.push({ id, notebook, parent, file: join(folder, entry.name), relativePath });
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const relativePath = [...parts, entry.name].join('/');
    if (!isValidId(entry.name)) { problems.set(relativePath, 'the folder name is not a document id'); continue; }
    if (!docs.has(entry.name)) { problems.set(relativePath, `child documents of a missing document '${entry.name}.json'`); continue; }
    await scanFolder(dataDir, notebook, entry.name, [...parts, entry.name], found, problems);
  }
}

function depth(doc: FoundDoc): number {
  return doc.relativePath.split('/').length;
}

function countBlocks(root: { children?: unknown[] }): number {
  let count = 1;
  for (const child of (root.children ?? []) as { children?: unknown[] }[]) count += countBlocks(child);
  return count;
}
