import { statSync, type Stats } from 'node:fs';
import { readFile, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { NotFoundError, KernelError, replaceFile, syncFolder, writeFileAtomic, type IntentJournal, type Logger } from '../../core/index.js';
import type { Block } from './block-model.js';
import type { BlockIndex, Problem } from './block-index.js';
import { childFolderOf, MAX_DOCUMENT_DEPTH, tooDeep, type DocCatalog, type DocEntry } from './doc-catalog.js';
import { documentBytes } from './document-bytes.js';
import { documentText, parseDocumentText } from './document-file.js';
import type { PreparedDocument } from './import-rows.js';
import { IndexGroup } from './index-group.js';
import { cloneTree } from './index-rows.js';
import { NOTEBOOK_CONF_FILE, notebookConfText, type NotebookConf } from './notebook-conf.js';
import type { WriteJournal } from './write-journal.js';
import { textHash, type TogetherIntent } from './write-together.js';
import { WriteQueue } from './write-queue.js';

export type ChangeOp = 'update' | 'move' | 'remove' | 'rollback';

/** A document about to change: its file's text as it still is, and who changes it. */
export interface DocumentChange {
  id: string;
  op: ChangeOp;
  by: string;
  notebook: string;
  /** data/-relative path of the file. */
  path: string;
  hpath: string;
  text: string;
}

export type ChangeListener = (change: DocumentChange) => Promise<void>;

/** Told the files a create is about to write (data/-relative) and their texts; resolves once it has noted them. */
export type BeforeCreate = (files: { path: string; text: string }[]) => Promise<void>;

interface Cached {
  root: Block;
  mtimeMs: number;
  size: number;
}

const CACHE_LIMIT = 256;
/**
 * Removes a file a failed create had written, with its folder synced: its creation was synced, so
 * without that a power cut could bring it back, and the next start would take it in as made by hand.
 * Best effort: the call is failing already.
 */
async function removeDurably(path: string): Promise<void> {
  await rm(path, { force: true }).catch(() => undefined);
  await syncFolder(dirname(path)).catch(() => undefined);
}

/** Files a failed create of several documents wrote go again, and the folders made for their children if left empty. */
async function removeCreated(files: readonly string[]): Promise<void> {
  await Promise.allSettled(files.map((path) => removeDurably(path)));
  for (const path of [...files].reverse()) await rmdir(childFolderOf(path)).catch(() => undefined);
}

/**
 * A document written whole, durably, on the thread pool. A lone write was once made with synchronous
 * calls, quicker by a few thread-pool round trips (document_create p50 2.0-2.2 ms against 2.4-2.8, 200
 * creates in process), but then a disk that stalls an fsync (a busy laptop disk: hundreds of ms) held
 * every request of the kernel for as long.
 */
function writeDocumentFile(path: string, bytes: Buffer): Promise<void> {
  return writeFileAtomic(path, bytes);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}


/**
 * Documents as files, mirrored into the index. Every write goes through one queue: the file first
 * (atomically), then the index in one transaction. Reads go to the file (through a cache checked
 * against the file's size and mtime, so a hand edit is never hidden).
 */
export class BlockStore {
  private readonly cache = new Map<string, Cached>();
  readonly queue = new WriteQueue();
  /** Index writes of documents written at the same time, committed together. */
  private readonly indexGroup: IndexGroup;
  /** Files found broken (relative path → reason): reported, skipped, never deleted. */
  readonly problems = new Map<string, Problem>();

  /** Group commit of document writes (write-journal.ts), once the plugin has opened it. */
  private journal: WriteJournal | undefined;
  /** Documents written together journal their new texts here first (write-together.ts), once the plugin has opened it. */
  private together: IntentJournal<TogetherIntent> | undefined;

  constructor(
    readonly dataDir: string,
    readonly index: BlockIndex,
    readonly catalog: DocCatalog,
    readonly log: Logger,
  ) {
    this.indexGroup = new IndexGroup(index);
  }

  /**
   * Told after each write of a document that exists whether its index rows were written with its file
   * (`false`: the file took the write, the rows did not; the plugin has the index synced again).
   */
  onIndexWrite: ((ok: boolean) => void) | undefined;

  useTogetherJournal(journal: IntentJournal<TogetherIntent>): void {
    this.together = journal;
  }

  /** From now on, journaled writes go through `journal`, and every structural write checkpoints it first. */
  useJournal(journal: WriteJournal): void {
    this.journal = journal;
    this.queue.beforeExclusive = () => journal.checkpoint();
  }

  /** Called with a document's file still as it was, before it is changed, moved or removed (history). */
  private readonly changeListeners: { listener: ChangeListener; wants: ((change: { id: string; op: ChangeOp; by: string }) => boolean) | undefined }[] = [];

  /** Returns what ends the listening (its plugin disabled: history kept recording after it was turned off). */
  onBeforeChange(listener: ChangeListener, wants?: (change: { id: string; op: ChangeOp; by: string }) => boolean): () => void {
    // Checked once here: a listener that is no function failed every later change of a document.
    if (typeof listener !== 'function' || (wants !== undefined && typeof wants !== 'function')) throw new KernelError('INVALID_INPUT', 'onBeforeChange takes functions', { details: { field: typeof listener !== 'function' ? 'listener' : 'wants' } });
    const entry = { listener, wants };
    this.changeListeners.push(entry);
    return () => {
      const at = this.changeListeners.indexOf(entry);
      if (at !== -1) this.changeListeners.splice(at, 1);
    };
  }

  async beforeChange(id: string, op: ChangeOp, by: string): Promise<void> {
    const listening = this.changeListeners.filter((entry) => entry.wants?.({ id, op, by }) !== false);
    if (listening.length === 0) return;
    const path = this.filePath(id);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    const entry = this.entry(id);
    for (const { listener } of listening) await listener({ id, op, by, notebook: entry.notebook, path: this.catalog.relativePath(id), hpath: this.catalog.hpath(id), text });
  }

  entry(id: string): DocEntry {
    const entry = this.catalog.doc(id);
    if (!entry) throw new NotFoundError('NOT_FOUND', `No document with id '${id}'`, { details: { id } });
    return entry;
  }

  filePath(id: string): string {
    return this.catalog.filePath(this.dataDir, id);
  }

  /** The document's block tree. The result is shared with the cache: callers must not change it. */
  async read(id: string): Promise<Block> {
    this.entry(id);
    const path = this.filePath(id);
    const info = statOrUndefined(path);
    if (!info) throw new NotFoundError('NOT_FOUND', `The file of document '${id}' is missing`, { details: { id, path: this.catalog.relativePath(id) } });
    const cached = this.cache.get(id);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.root;
    const parsed = parseDocumentText(await readFile(path, 'utf8'), id);
    if (!parsed.ok) {
      const issue = parsed.issues[0]!;
      // The caller's input was fine: the file on disk is damaged (edited by hand, a sync tool), a server-side state.
      throw new KernelError('WORKSPACE_INVALID', `The file ${this.catalog.relativePath(id)} is not a valid document: ${issue.pointer || '/'} ${issue.message}; repair it by hand, or roll it back from its history`,
        { details: { path: this.catalog.relativePath(id), issues: parsed.issues } });
    }
    this.remember(id, { root: parsed.value, mtimeMs: info.mtimeMs, size: info.size });
    return parsed.value;
  }

  /** A copy of the document to change; the cached tree stays as it is until the write succeeds. */
  async readForWrite(id: string): Promise<Block> {
    return cloneTree(await this.read(id));
  }

  /**
   * Writes a document (file, then index) and records where it is. Call inside the write queue.
   * `journaled` (writes inside one document, never structural ones): made durable through the write
   * journal (shared with the documents written at the same time), the file replaced without an fsync.
   */
  async write(root: Block, entry: DocEntry, options: { recorded?: boolean; journaled?: boolean } = {}): Promise<void> {
    this.checkPlace(entry);
    // `recorded`: the caller already reported this change (a move reports itself before its renames).
    if (this.catalog.doc(root.id) && !options.recorded) await this.beforeChange(root.id, 'update', root.attrs.updatedBy ?? 'kernel');
    const before = this.catalog.doc(root.id);
    const titled = { ...entry, title: root.content ?? '' };
    // A new document enters the catalog (and so every listing) only once its file is written: a caller
    // that finds it listed can read it. A document that exists takes its new title and place at once.
    if (before) this.catalog.setDoc(titled);
    const path = before ? this.filePath(root.id) : this.catalog.filePathOf(this.dataDir, titled);
    // A new document's file that a failed write leaves behind (its folder's fsync failed after the
    // rename) goes again, or the next sync would take it in as a document made by hand.
    const fresh = !before && statOrUndefined(path) === undefined;
    try {
      const bytes = documentBytes(root);
      // Journaled writes are of documents that exist (the journal names them by their catalog path).
      if (options.journaled && this.journal && before) await this.journal.record(this.catalog.relativePath(root.id), bytes, () => replaceFile(path, bytes));
      else await writeDocumentFile(path, bytes);
    } catch (error) {
      if (before) this.catalog.setDoc(before);
      if (fresh) await removeDurably(path);
      throw error;
    }
    const info = statSync(path);
    if (before) {
      const place = this.placeOf(root.id);
      try {
        await this.indexGroup.run(() => this.index.writeDocument(root, place, entry.parent, info, { inCallersTransaction: true }));
      } catch (error) {
        // The file holds the change, durably, and the files are the truth (the index is a cache of them):
        // the write has happened. Answered as failed, a retried insert added its block a second time.
        // The index catches up at the sync the plugin starts now (or the next start's), which reports a
        // document it cannot index as a problem.
        this.remember(root.id, { root, mtimeMs: info.mtimeMs, size: info.size });
        this.log.warn('a document was written but its index rows were not; the index is synced again', { id: root.id, error: String((error as Error).message ?? error) });
        this.onIndexWrite?.(false);
        return;
      }
      this.onIndexWrite?.(true);
    } else {
      // A new document enters the catalog and gets its index rows in the same turn of the event loop:
      // listed in between, it showed no time of change, and search did not find it. If its rows cannot
      // be written, it leaves the catalog and its file goes: the create has not happened.
      this.catalog.setDoc(titled);
      try {
        this.index.writeDocument(root, this.placeOf(root.id), entry.parent, info);
      } catch (error) {
        this.catalog.deleteDoc(root.id);
        await removeDurably(path);
        throw error;
      }
    }
    this.remember(root.id, { root, mtimeMs: info.mtimeMs, size: info.size });
    const relative = this.catalog.relativePath(root.id);
    if (this.problems.delete(relative)) this.index.deleteProblem(relative);
  }

  /**
   * Writes existing documents that change together (a block moved between them): every file, then
   * every document's rows in one transaction. Their new texts are journaled first, so a crash between
   * two files is finished at the next start (write-together.ts). If a file fails, those already
   * written get their old text back, so a block is never left in two documents or in none.
   * Call inside the queue's `run` (a structural write): the write journal is then checkpointed, so no
   * older record of these documents can be replayed over them after a crash.
   */
  async writeTogether(docs: readonly { root: Block; entry: DocEntry }[]): Promise<void> {
    for (const { root, entry } of docs) {
      this.checkPlace(entry);
      await this.beforeChange(root.id, 'update', root.attrs.updatedBy ?? 'kernel');
    }
    const files = await Promise.all(docs.map(async ({ root }) => {
      const path = this.filePath(root.id);
      return { path, relative: this.catalog.relativePath(root.id), bytes: documentBytes(root), old: await readFile(path) };
    }));
    const journaled = await this.together?.begin({ files: files.map((file) => ({ path: file.relative, text: file.bytes.toString('utf8'), before: textHash(file.old) })) });
    const written: { path: string; text: Buffer }[] = [];
    try {
      for (const { path, bytes, old } of files) {
        // Counted as written before the write: one that fails after its rename (the folder's fsync) must
        // get its old text back too, or the moved block would be in neither document.
        written.push({ path, text: old });
        await writeDocumentFile(path, bytes);
      }
      const infos = docs.map(({ root }) => statSync(this.filePath(root.id)));
      this.index.transaction(() => {
        docs.forEach(({ root, entry }, i) => this.index.writeDocument(root, this.placeOf(root.id), entry.parent, infos[i]!));
      });
      docs.forEach(({ root }, i) => this.remember(root.id, { root, mtimeMs: infos[i]!.mtimeMs, size: infos[i]!.size }));
    } catch (error) {
      // Every file written gets its old text back: the index was not changed (or was rolled back).
      let restored = true;
      for (const { path, text } of written.reverse()) await writeFileAtomic(path, text).catch(() => { restored = false; });
      for (const { root } of docs) this.forget(root.id);
      // Put back whole: nothing is left to finish. Otherwise the next start writes the new texts.
      if (restored && journaled !== undefined) await this.together!.done(journaled).catch(() => undefined);
      throw error;
    }
    // Done: a record that cannot be removed is harmless (the next start finds every file with its new
    // text, or changed since, and writes nothing), so the change is not reported as failed for it.
    if (journaled !== undefined) await this.together!.done(journaled).catch((error: unknown) => this.log.warn('the record of a change of several documents could not be removed; the next start drops it', { error: (error as Error).message }));
  }

  /** A document is written only where its notebook and parent still are (a removal queued just before), and not too deep. */
  private checkPlace(entry: DocEntry): void {
    this.notebook(entry.notebook);
    if (entry.parent !== null) {
      const parent = this.entry(entry.parent);
      if (parent.notebook !== entry.notebook) throw new KernelError('INVALID_INPUT', `The parent document '${entry.parent}' is in another notebook`, { details: { parentId: entry.parent } });
      // Only for a document new here or moved here: one already deeper (by hand, an older version) stays writable.
      if (this.catalog.doc(entry.id)?.parent !== entry.parent && this.catalog.depth(entry.parent) >= MAX_DOCUMENT_DEPTH) throw tooDeep(this.catalog.depth(entry.parent) + 1, 'parentId');
    }
  }

  /**
   * Writes several new documents at once (an import): their files in parallel, then their rows in one
   * transaction. Parents must come before their children. If any file fails, the files of this call are
   * removed again and nothing is indexed.
   */
  async createMany(docs: readonly { root: Block; entry: DocEntry }[]): Promise<void> {
    await this.createFiles(docs.map(({ root, entry }) => ({ entry: { ...entry, title: root.content ?? '' }, text: () => documentText(root) })), (infos) => {
      docs.forEach(({ root, entry }, i) => this.index.writeDocument(root, this.placeOf(root.id), entry.parent, infos[i]!));
    });
  }

  /**
   * New documents whose file text and index rows an import's workers made: their files in parallel,
   * their rows inserted in one transaction, as createMany. `beforeWrite` is told the files (data/-relative)
   * and their texts before the first is written (an import journals them).
   */
  async createPrepared(docs: readonly { doc: PreparedDocument; entry: DocEntry }[], beforeWrite?: BeforeCreate): Promise<void> {
    await this.createFiles(docs.map(({ doc, entry }) => ({ entry, text: () => doc.text })), (infos) => {
      this.index.writePrepared(docs.map(({ doc, entry }, i) => ({ doc, place: this.placeOf(doc.id), parentDoc: entry.parent, file: infos[i]! })));
    }, beforeWrite);
  }

  private async createFiles(docs: readonly { entry: DocEntry; text: () => string }[], writeIndex: (infos: Stats[]) => void, beforeWrite?: BeforeCreate): Promise<void> {
    // Parents come first: each document's parent is in the catalog or earlier in this call. The new
    // documents enter the catalog (and so every listing) only once all their files are written, so a
    // caller that finds one listed can read it.
    const here = new Map<string, { entry: DocEntry; path: string; depth: number }>();
    for (const { entry } of docs) {
      // Its file would be written over another's (an import that kept the ids of its source).
      if (here.has(entry.id) || this.catalog.doc(entry.id)) throw new KernelError('CONFLICT', `A document with id '${entry.id}' already exists`, { details: { id: entry.id } });
      const parent = entry.parent === null ? undefined : here.get(entry.parent);
      if (parent === undefined) this.checkPlace(entry);
      else if (parent.entry.notebook !== entry.notebook) {
        throw new KernelError('INVALID_INPUT', `The parent document '${entry.parent}' is in another notebook`, { details: { parentId: entry.parent } });
      } else if (parent.depth >= MAX_DOCUMENT_DEPTH) throw tooDeep(parent.depth + 1, 'parentId');
      const depth = parent ? parent.depth + 1 : entry.parent === null ? 1 : this.catalog.depth(entry.parent) + 1;
      here.set(entry.id, { entry, depth, path: parent === undefined ? this.catalog.filePathOf(this.dataDir, entry) : this.catalog.filePathBelow(parent.path, entry.id) });
    }
    const files = docs.map(({ entry }) => here.get(entry.id)!.path);
    await beforeWrite?.(files.map((path, i) => ({ path: relative(this.dataDir, path).split(sep).join('/'), text: docs[i]!.text() })));
    const written = await Promise.allSettled(docs.map(({ text }, i) => writeFileAtomic(files[i]!, text())));
    const failed = written.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) {
      await removeCreated(files);
      throw failed.reason;
    }
    const infos = await Promise.all(files.map((path) => stat(path)));
    for (const { entry } of docs) this.catalog.setDoc(entry);
    try {
      this.index.transaction(() => writeIndex(infos));
    } catch (error) {
      // Rows that cannot be written (a full disk) leave none of these documents: out of the catalog, files gone.
      for (const { entry } of docs) this.catalog.deleteDoc(entry.id);
      await removeCreated(files);
      throw error;
    }
  }

  /**
   * Moves the index rows of documents whose place (notebook, path, hpath) changed but whose files did
   * not (the documents below a moved or renamed one), without reading their files: one of them may be
   * broken, and the rows must follow all the same.
   */
  replaceSubtree(ids: readonly string[]): void {
    this.index.transaction(() => {
      for (const id of ids) this.index.movePlace(id, this.placeOf(id), this.entry(id).parent);
    });
  }

  placeOf(id: string): { notebook: string; path: string; hpath: string } {
    return { notebook: this.entry(id).notebook, path: this.catalog.relativePath(id), hpath: this.catalog.hpath(id) };
  }

  forget(id: string): void {
    this.cache.delete(id);
  }

  notebookFolder(notebook: string): string {
    return join(this.dataDir, notebook);
  }

  async writeNotebookConf(notebook: string, conf: NotebookConf): Promise<void> {
    await writeFileAtomic(join(this.notebookFolder(notebook), NOTEBOOK_CONF_FILE), notebookConfText(conf));
    this.catalog.notebooks.set(notebook, conf);
    this.index.writeNotebook(notebook, conf);
  }

  notebook(id: string): NotebookConf {
    const conf = this.catalog.notebooks.get(id);
    if (!conf) throw new NotFoundError('NOT_FOUND', `No notebook with id '${id}'`, { details: { notebook: id } });
    return conf;
  }

  private remember(id: string, cached: Cached): void {
    this.cache.delete(id);
    this.cache.set(id, cached);
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
  }
}
