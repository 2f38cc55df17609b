import { mkdir, rename } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { ConflictError, pathExists, type ActionCall, type IntentJournal } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNoBrokenFiles, assertNotebookVisible, checkExpected, invalid } from './access.js';
import { MAX_DOCUMENT_DEPTH, tooDeep, type DocEntry } from './doc-catalog.js';
import { removeDocumentFiles } from './document-removal.js';
import { touch, updatedBy } from './provenance.js';

interface MoveInput { id: string; notebook: string; parentId?: string; expectedUpdated?: string }

/** A document move as the journal holds it: its file and its folder of children, from → to (data/-relative). */
export interface MoveIntent {
  file: [string, string];
  folder: [string, string];
}

function relativeTo(dataDir: string, path: string): string {
  return relative(dataDir, path).split(sep).join('/');
}

/**
 * Finishes the moves a crash cut short, before the start-up sync reads data/: a file already moved
 * takes its folder of children along; a file not moved yet means nothing happened. Returns what was done.
 */
export async function finishInterruptedMoves(dataDir: string, journal: IntentJournal<MoveIntent>): Promise<string[]> {
  const done: string[] = [];
  const at = (path: string) => join(dataDir, ...path.split('/'));
  for (const { id, intent } of await journal.pending()) {
    const [fromFile, toFile] = intent.file.map(at) as [string, string];
    const [fromFolder, toFolder] = intent.folder.map(at) as [string, string];
    if (await pathExists(toFile) && !(await pathExists(fromFile)) && await pathExists(fromFolder) && !(await pathExists(toFolder))) {
      await mkdir(dirname(toFolder), { recursive: true });
      await rename(fromFolder, toFolder);
      done.push(`moved ${intent.folder[0]} to ${intent.folder[1]}`);
    }
    await journal.done(id);
  }
  return done;
}


/** Everything a move must satisfy; checked on arrival, and again when its turn in the write queue comes. */
function checkMove(rt: BlocksRuntime, call: ActionCall, input: MoveInput): void {
  const { store } = rt;
  assertDocumentVisible(store, call, input.id);
  assertNotebookVisible(store, call, input.notebook);
  if (input.parentId !== undefined) {
    assertDocumentVisible(store, call, input.parentId);
    if (store.catalog.isSelfOrDescendant(input.parentId, input.id)) {
      throw invalid('A document cannot be moved under itself or one of its own child documents', { field: 'parentId', id: input.id, parentId: input.parentId });
    }
    if (store.entry(input.parentId).notebook !== input.notebook) throw invalid(`The parent document '${input.parentId}' is not in notebook '${input.notebook}'`, { field: 'parentId' });
    // With the documents below it, which move along (the deepest of them became unreadable).
    const depth = store.catalog.depth(input.parentId) + store.catalog.height(input.id);
    if (depth > MAX_DOCUMENT_DEPTH) throw tooDeep(depth, 'parentId');
  }
  // Broken files move along with their folder, but the index could not follow them.
  const relative = store.catalog.relativePath(input.id);
  assertNoBrokenFiles(store, [relative, `${relative.slice(0, -'.json'.length)}/`]);
}

/**
 * Moves a document and everything below it: its file, then its folder of child documents (each one
 * rename, so a crash leaves whole files), then the index rows of the whole subtree.
 */
export function moveDocument(rt: BlocksRuntime, call: ActionCall, input: MoveInput) {
  const { store } = rt;
  checkMove(rt, call, input);
  return store.queue.run(async () => {
    // Checked again in the queue: a move, rename or removal queued before this one may have changed the answer.
    checkMove(rt, call, input);
    const root = await store.readForWrite(input.id);
    checkExpected(root, input.expectedUpdated);
    const subtree = store.catalog.subtree(input.id);
    await store.beforeChange(input.id, 'move', updatedBy(call));
    const oldFile = store.filePath(input.id);
    const oldFolder = store.catalog.childFolder(store.dataDir, input.id);
    const before: DocEntry[] = subtree.map((entry) => ({ ...entry }));
    for (const entry of subtree) {
      store.catalog.setDoc({ ...entry, notebook: input.notebook, parent: entry.id === input.id ? input.parentId ?? null : entry.parent });
    }
    const newFile = store.filePath(input.id);
    const newFolder = store.catalog.childFolder(store.dataDir, input.id);
    const relative = (path: string) => relativeTo(store.dataDir, path);
    // Something already there (a copy of the document that index problems report, a file made by hand) is
    // not moved over: rename replaced the file without a word.
    if (newFile !== oldFile && (await pathExists(newFile) || (await pathExists(newFolder) && await pathExists(oldFolder)))) {
      for (const entry of before) store.catalog.setDoc(entry);
      throw new ConflictError('CONFLICT', `there is already a file at ${relative(newFile)} (index_problems may list it as a copy): remove or rename it first`, { details: { path: relative(newFile) } });
    }
    const intent: MoveIntent = { file: [relative(oldFile), relative(newFile)], folder: [relative(oldFolder), relative(newFolder)] };
    // Journaled: a crash between the two renames is finished at the next start, not left as an orphan folder.
    let journaled: Awaited<ReturnType<typeof rt.moves.begin>>;
    try {
      journaled = await rt.moves.begin(intent);
    } catch (error) {
      // Nothing moved: the catalog goes back too (it listed the document where no file of it was).
      for (const entry of before) store.catalog.setDoc(entry);
      throw error;
    }
    try {
      await mkdir(dirname(newFile), { recursive: true });
      await rename(oldFile, newFile);
      if (await pathExists(oldFolder)) await rename(oldFolder, newFolder);
    } catch (error) {
      for (const entry of before) store.catalog.setDoc(entry);
      if (await pathExists(newFile) && !(await pathExists(oldFile))) await rename(newFile, oldFile).catch(() => undefined);
      // Put back whole: the journal's work is done. Otherwise the next start finishes the move.
      if (await pathExists(oldFile) && !(await pathExists(newFile)) && !(await pathExists(newFolder))) await rt.moves.done(journaled);
      throw error;
    }
    await rt.moves.done(journaled);
    for (const entry of subtree) store.forget(entry.id);
    touch(root, updatedBy(call), new Date());
    await store.write(root, store.entry(input.id), { recorded: true });
    store.replaceSubtree(subtree.slice(1).map((entry) => entry.id));
    return { id: input.id, notebook: input.notebook, parentId: input.parentId ?? null, hpath: store.catalog.hpath(input.id), moved: subtree.map((entry) => entry.id) };
  }, call);
}

/** Removes a document, its child documents and their index rows. */
export function removeDocument(rt: BlocksRuntime, call: ActionCall, input: { id: string; expectedUpdated?: string }) {
  const { store } = rt;
  assertDocumentVisible(store, call, input.id);
  return store.queue.run(async () => {
    // Again at its turn: a removal of it or of its parent queued before this one may have taken it
    // (then NOT_FOUND, not an internal error from a path that no longer exists).
    assertDocumentVisible(store, call, input.id);
    if (input.expectedUpdated !== undefined) checkExpected(await store.read(input.id), input.expectedUpdated);
    const subtree = store.catalog.subtree(input.id);
    const relative = store.catalog.relativePath(input.id);
    assertNoBrokenFiles(store, [relative, `${relative.slice(0, -'.json'.length)}/`]);
    const file = store.filePath(input.id);
    const folder = store.catalog.childFolder(store.dataDir, input.id);
    // Journaled, the children's folder set aside at once: a crash leaves all of them or none (no orphans).
    for (const entry of subtree) await store.beforeChange(entry.id, 'remove', updatedBy(call));
    await removeDocumentFiles(store.dataDir, file, folder, rt.removals);
    store.index.transaction(() => { for (const entry of subtree) store.index.removeDocument(entry.id); });
    for (const entry of subtree.reverse()) {
      store.catalog.deleteDoc(entry.id);
      store.forget(entry.id);
    }
    return { removed: subtree.map((entry) => entry.id).reverse() };
  }, call);
}
