import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { diskFull, isKernelError, isValidId } from '../../core/index.js';
import type { DocumentRecord, Problem } from './block-index.js';
import type { BlockStore } from './block-store.js';
import type { DocEntry } from './doc-catalog.js';
import { parseDocumentText } from './document-file.js';
import { PARSE_WORKERS } from './markdown-parser.js';
import { NOTEBOOK_CONF_FILE, parseNotebookConf, type NotebookConf } from './notebook-conf.js';
import type { RebuildDocWork, RebuiltDocument } from './rebuild-rows.js';
import { countBlocks, statAll, storageFailure } from './sync-helpers.js';

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
  /** The documents removed, by notebook (so that a caller who may not see every notebook is told of theirs only). */
  removedIn: Record<string, number>;
  problems: { path: string; reason: string; other?: string }[];
}

export interface SyncOptions {
  /** Reindex every document, not only those whose size or mtime changed (a rebuild). */
  full?: boolean;
  onProgress?(done: number, total: number): void;
  /** Checked before each document: a stop rolls the whole sync back, so the index stays as it was. */
  stopCheck?(): void;
  /**
   * Reads and derives documents' rows off the main thread (the parse workers); used by a full sync,
   * which then only inserts rows here.
   */
  prepare?(docs: RebuildDocWork[]): Promise<RebuiltDocument[]>;
  /**
   * Each document's rows in a savepoint of their own: one SQLite refuses (a row that cannot be written)
   * is reported as a problem and the rest commit. A sync that failed is run once more so.
   */
  careful?: boolean;
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
    store.index.transactionEnded();
    return report;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    store.index.transactionEnded();
    store.index.forgetKnown();
    // Once more, a document at a time (without the workers' bulk rows): a document whose rows SQLite
    // refuses failed the whole sync, every time, and with it every sync after (a write whose rows failed
    // starts one). A stop is a stop, and a careful sync that fails has nothing left to try.
    if (!options.careful && !(isKernelError(error) && (error.code === 'ACTION_TIMEOUT' || error.code === 'ACTION_CANCELLED')) && !storageFailure(error)) {
      store.log.warn('the index sync failed; it is run again a document at a time', { error: error instanceof Error ? error.message : String(error) });
      const { prepare: _bulk, ...rest } = options;
      return syncWithFiles(store, { ...rest, careful: true });
    }
    // A full disk is said as one (507, what was not written), not as a plugin's internal error: the
    // sync's own writes skip the index's transaction helper, the one place that said so.
    throw diskFull(error, { what: 'index', file: 'index/quire.db', note: 'the sync was rolled back whole; the files are as they were' });
  }
}

interface SyncState {
  store: BlockStore;
  options: SyncOptions;
  problems: Map<string, Problem>;
  /** What the index held for each document before this sync. */
  known: Map<string, DocumentRecord>;
}

async function syncInTransaction(store: BlockStore, options: SyncOptions): Promise<SyncReport> {
  // The sync compares files with the database itself, not with what was remembered of it.
  store.index.forgetKnown();
  const problems = new Map<string, Problem>();
  const notebooks = await scanNotebooks(store.dataDir, problems);
  const scanned: FoundDoc[] = [];
  for (const notebook of notebooks.keys()) await scanFolder(store.dataDir, notebook, null, [notebook], scanned, problems);
  const known = new Map(store.index.allDocuments().map((doc) => [doc.id, doc]));
  const found = oneFilePerId(scanned, (id) => known.get(id)?.path, problems);
  if (options.full) store.index.clear();
  const state: SyncState = { store, options, problems, known };
  reconcileNotebooks(store, notebooks);
  const present = new Set(found.map((doc) => doc.id));
  // Counted by notebook too, for a caller who may not see them all (index rebuild, access.ts).
  const removedIn: Record<string, number> = {};
  for (const [id, record] of state.known) if (!present.has(id)) { store.index.removeDocument(id); removedIn[record.notebook] = (removedIn[record.notebook] ?? 0) + 1; }
  const removed = Object.values(removedIn).reduce((sum, count) => sum + count, 0);
  const changed = await reconcileCatalog(state, found, present);
  const { blocks, failed, retitled } = await indexChanged(state, changed);
  // A title edited by hand changes the hpath of every document below it.
  const done = new Set(changed.map((doc) => doc.id));
  for (const id of retitled) {
    const below = store.catalog.subtree(id).filter((entry) => !done.has(entry.id)).map((entry) => entry.id);
    for (const other of below) done.add(other);
    store.replaceSubtree(below);
  }
  // A problem found in a file this sync did not re-read (an id also in another file) still stands.
  if (!options.full) {
    const reread = new Set(changed.map((doc) => doc.relativePath));
    const files = new Set(found.map((doc) => doc.relativePath));
    for (const [path, problem] of store.index.problems()) if (files.has(path) && !reread.has(path) && !problems.has(path)) problems.set(path, problem);
  }
  recordProblems(store, problems);
  return { notebooks: notebooks.size, documents: found.length, indexed: changed.length - failed, blocks, removed, removedIn, problems: [...problems].map(([path, problem]) => ({ path, ...problem })) };
}

function reconcileNotebooks(store: BlockStore, notebooks: Map<string, NotebookConf>): void {
  const { catalog, index } = store;
  for (const [id, conf] of notebooks) {
    catalog.notebooks.set(id, conf);
    index.writeNotebook(id, conf);
  }
  for (const id of [...catalog.notebooks.keys()]) if (!notebooks.has(id)) catalog.notebooks.delete(id);
  for (const id of index.notebookIds()) if (!notebooks.has(id)) index.removeNotebook(id);
}

/**
 * Puts every document found in the catalog (titles from the index where the file is unchanged, so
 * that hpaths resolve for all), drops those gone, and returns those to index, parents first in a
 * fixed order (so that an id found in two files always ends up the same way).
 */
async function reconcileCatalog(state: SyncState, found: FoundDoc[], present: Set<string>): Promise<FoundDoc[]> {
  const { catalog } = state.store;
  for (const entry of [...catalog.allDocs()]) if (!present.has(entry.id)) catalog.deleteDoc(entry.id);
  const changed: FoundDoc[] = [];
  const infos = await statAll(found.map((doc) => doc.file));
  for (const [i, doc] of found.entries()) {
    // A file removed since the scan is simply gone: the next sync (the watcher's) drops its rows.
    const info = infos[i];
    if (!info) continue;
    const record = state.known.get(doc.id);
    const same = record && record.mtime_ms === Math.trunc(info.mtimeMs) && record.size === info.size && record.path === doc.relativePath;
    catalog.setDoc({ id: doc.id, notebook: doc.notebook, parent: doc.parent, title: same ? record.title : catalog.doc(doc.id)?.title ?? '' });
    if (!same || state.options.full) changed.push(doc);
  }
  return changed.sort((a, b) => depth(a) - depth(b) || (a.relativePath < b.relativePath ? -1 : 1));
}

async function indexChanged(state: SyncState, changed: FoundDoc[]): Promise<{ blocks: number; failed: number; retitled: string[] }> {
  if (state.options.full && state.options.prepare) return indexPrepared(state, changed, state.options.prepare);
  const { store, options, problems } = state;
  const changedIds = new Set(changed.map((doc) => doc.id));
  const retitled: string[] = [];
  let blocks = 0;
  let failed = 0;
  for (const [i, doc] of changed.entries()) {
    options.stopCheck?.();
    // Stated before and after the read: a save landing between the read and a later stat recorded the new
    // file's size and time against the old text, and the watcher then took the file as indexed.
    const before = await stat(doc.file).catch(() => undefined);
    const text = await readFile(doc.file, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const parsed = parseDocumentText(text, doc.id);
    if (!parsed.ok) {
      const issue = parsed.issues[0]!;
      problems.set(doc.relativePath, { reason: `${issue.pointer || '/'}: ${issue.message}` });
      store.index.removeDocument(doc.id);
      failed++;
      continue;
    }
    const entry: DocEntry = { id: doc.id, notebook: doc.notebook, parent: doc.parent, title: parsed.value.content ?? '' };
    if (state.known.get(doc.id)?.title !== undefined && state.known.get(doc.id)!.title !== entry.title) retitled.push(doc.id);
    store.catalog.setDoc(entry);
    const after = await stat(doc.file).catch(() => undefined);
    if (!after) continue;
    // Changed during the read: the older stat is kept, which the file no longer matches, so it is read again.
    const info = before && (before.mtimeMs !== after.mtimeMs || before.size !== after.size) ? before : after;
    // The sync's transaction is rolled back whole if a write fails: no savepoint per document (one makes
    // the full-text table flush its terms per document), but in a careful sync (see SyncOptions).
    let taken: ReturnType<BlockStore['index']['writeDocument']>;
    try {
      taken = options.careful
        ? store.index.db.transaction(() => store.index.writeDocument(parsed.value, store.placeOf(doc.id), doc.parent, info, { inCallersTransaction: true }))()
        : store.index.writeDocument(parsed.value, store.placeOf(doc.id), doc.parent, info, { inCallersTransaction: true });
    } catch (error) {
      // The storage failing (a full disk, I/O) is no fault of the document: the sync fails as a whole.
      if (!options.careful || !store.index.db.inTransaction || storageFailure(error)) throw error;
      problems.set(doc.relativePath, { reason: `its rows could not be written to the index: ${error instanceof Error ? error.message : String(error)}` });
      // Its old rows stay (unlike a file's that does not parse): through them its blocks can still be
      // changed by the actions, and a change that takes out what SQLite refuses mends it.
      store.forget(doc.id);
      failed++;
      continue;
    }
    // Taking a block over from a document this sync has not rewritten means its id is in two files.
    for (const block of taken) {
      if (options.full || !changedIds.has(block.from)) problems.set(doc.relativePath, { reason: `block ${block.id} also appears in another document; give one of them a new id`, other: block.from });
    }
    store.forget(doc.id);
    blocks += countBlocks(parsed.value);
    options.onProgress?.(i + 1, changed.length);
  }
  return { blocks, failed, retitled };
}

/** Documents per batch a worker reads and derives; as many batches are read ahead as there are workers. */
const REBUILD_BATCH = 64;

/**
 * A full sync's documents read, checked and derived on the workers, batches ahead, and inserted here in
 * the order of `changed` (parents first): the rows get their place (the hpath depends on the titles
 * above) as they are inserted. A document holding a block id already inserted (an id found in two files) is
 * written the ordinary way, which takes the block over and reports it.
 */
async function indexPrepared(state: SyncState, changed: FoundDoc[], prepare: (docs: RebuildDocWork[]) => Promise<RebuiltDocument[]>): Promise<{ blocks: number; failed: number; retitled: string[] }> {
  const { store, options, problems } = state;
  const batches: FoundDoc[][] = [];
  for (let i = 0; i < changed.length; i += REBUILD_BATCH) batches.push(changed.slice(i, i + REBUILD_BATCH));
  const reading: Promise<RebuiltDocument[]>[] = [];
  let queued = 0;
  const readAhead = (): void => {
    while (queued < batches.length && reading.length < PARSE_WORKERS) {
      const batch = prepare(batches[queued++]!.map((doc) => ({ id: doc.id, file: doc.file })));
      batch.catch(() => undefined);
      reading.push(batch);
    }
  };
  readAhead();
  const inserted = new Set<string>();
  let blocks = 0;
  let failed = 0;
  let done = 0;
  for (const batch of batches) {
    const rebuilt = await reading.shift()!;
    readAhead();
    for (const [i, result] of rebuilt.entries()) {
      options.stopCheck?.();
      const doc = batch[i]!;
      done++;
      if ('missing' in result) continue;
      if (!result.ok) {
        problems.set(doc.relativePath, { reason: `${result.pointer || '/'}: ${result.message}` });
        store.index.removeDocument(doc.id);
        failed++;
        continue;
      }
      const { rows } = result;
      store.catalog.setDoc({ id: doc.id, notebook: doc.notebook, parent: doc.parent, title: rows.title });
      const place = store.placeOf(doc.id);
      const before = inserted.size;
      for (const block of rows.blocks) inserted.add(block.values[0]);
      if (inserted.size - before !== rows.blocks.length) {
        // Rare (an id in two files, or twice in one): read it again here, and let writeDocument take
        // the block over and say so.
        const parsed = parseDocumentText(await readFile(doc.file, 'utf8'), doc.id);
        if (!parsed.ok) throw new Error(`${doc.relativePath} changed during the rebuild`);
        const taken = store.index.writeDocument(parsed.value, place, doc.parent, { mtimeMs: result.mtimeMs, size: result.size }, { inCallersTransaction: true });
        for (const block of taken) problems.set(doc.relativePath, { reason: `block ${block.id} also appears in another document; give one of them a new id`, other: block.from });
      } else {
        store.index.writePrepared([{ doc: rows, place, parentDoc: doc.parent, file: { mtimeMs: result.mtimeMs, size: result.size } }]);
      }
      store.forget(doc.id);
      blocks += result.count;
      options.onProgress?.(done, changed.length);
    }
  }
  return { blocks, failed, retitled: [] };
}

/** Keeps the problems for `index problems`, and logs each one once, when it first appears. */
function recordProblems(store: BlockStore, problems: Map<string, Problem>): void {
  for (const [path, problem] of problems) {
    if (store.problems.get(path)?.reason !== problem.reason) store.log.warn('skipped a file that is not a valid document or notebook', { path, reason: problem.reason });
  }
  store.problems.clear();
  for (const [path, problem] of problems) store.problems.set(path, problem);
  store.index.replaceProblems(problems);
}

async function scanNotebooks(dataDir: string, problems: Map<string, Problem>): Promise<Map<string, NotebookConf>> {
  const out = new Map<string, NotebookConf>();
  const entries = await readdir(dataDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory() || !isValidId(entry.name)) continue;
    const file = join(dataDir, entry.name, NOTEBOOK_CONF_FILE);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) {
      problems.set(`${entry.name}/${NOTEBOOK_CONF_FILE}`, { reason: 'missing: the folder is not a notebook' });
      continue;
    }
    const parsed = parseNotebookConf(text);
    if (parsed.ok) out.set(entry.name, parsed.value);
    else problems.set(`${entry.name}/${NOTEBOOK_CONF_FILE}`, { reason: parsed.message });
  }
  return out;
}

/**
 * One file per document id. A copy of a document's file in another folder (a sync tool's, a hand copy,
 * or one in its own child folder) has its id: the sync took one file, then the other, at each run, and
 * a document copied into its own folder became its own parent. The file the index knows the id at is
 * kept, else the first by path; each other is a problem, and read by nothing.
 */
function oneFilePerId(found: FoundDoc[], knownPath: (id: string) => string | undefined, problems: Map<string, Problem>): FoundDoc[] {
  const byId = new Map<string, FoundDoc[]>();
  for (const doc of found) byId.set(doc.id, [...(byId.get(doc.id) ?? []), doc]);
  const dropped = new Set<FoundDoc>();
  for (const [id, docs] of byId) {
    if (docs.length === 1) continue;
    const keep = docs.find((doc) => doc.relativePath === knownPath(id)) ?? [...docs].sort((a, b) => (a.relativePath < b.relativePath ? -1 : 1))[0]!;
    for (const other of docs) {
      if (other === keep) continue;
      dropped.add(other);
      problems.set(other.relativePath, { reason: `the same document id as ${keep.relativePath} (a copy): rename or remove one` });
    }
  }
  if (dropped.size === 0) return found;
  // What is inside a copy's folder is the copy's too: read, it would be placed under the kept document,
  // at a path where no file is.
  const folders = [...dropped].map((doc) => `${doc.relativePath.slice(0, -'.json'.length)}/`);
  for (const doc of found) {
    if (dropped.has(doc)) continue;
    const folder = folders.find((prefix) => doc.relativePath.startsWith(prefix));
    if (folder === undefined) continue;
    dropped.add(doc);
    problems.set(doc.relativePath, { reason: `inside ${folder.slice(0, -1)}, a copy of another document's file: rename or remove that copy` });
  }
  return found.filter((doc) => !dropped.has(doc));
}

async function scanFolder(dataDir: string, notebook: string, parent: string | null, parts: string[], found: FoundDoc[], problems: Map<string, Problem>): Promise<void> {
  const folder = join(dataDir, ...parts);
  // Removed or renamed while the scan walks (a sync tool, rm -r): it is gone, not a reason to stop the sync.
  // Unreadable (EACCES, EIO): a problem of its own, as an unreadable file is; it stopped every sync, and
  // with the start-up sync every action of the plugin, in every notebook.
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') problems.set(`${parts.join('/')}/`, { reason: `the folder cannot be read (${error.code ?? error.message}): its documents are left out until it can` });
    return [];
  });
  const docs = new Set<string>();
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.json') || entry.name.startsWith('.')) continue;
    const id = entry.name.slice(0, -'.json'.length);
    const relativePath = [...parts, entry.name].join('/');
    if (!isValidId(id)) { problems.set(relativePath, { reason: 'the file name is not a document id (YYYYMMDDhhmmss-xxxxxxx.json)' }); continue; }
    docs.add(id);
    found.push({ id, notebook, parent, file: join(folder, entry.name), relativePath });
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const relativePath = [...parts, entry.name].join('/');
    if (!isValidId(entry.name)) { problems.set(relativePath, { reason: 'the folder name is not a document id' }); continue; }
    if (!docs.has(entry.name)) {
      // An empty folder (left by a failed write or a hand edit) holds nothing to lose.
      if ((await readdir(join(folder, entry.name)).catch(() => [])).length > 0) problems.set(relativePath, { reason: `child documents of a missing document '${entry.name}.json'` });
      continue;
    }
    await scanFolder(dataDir, notebook, entry.name, [...parts, entry.name], found, problems);
  }
}

function depth(doc: FoundDoc): number {
  return doc.relativePath.split('/').length;
}
