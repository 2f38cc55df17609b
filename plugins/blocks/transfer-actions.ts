import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { claimIds, ConflictError, isKernelError, isValidId, KernelError, newId, stoppedNote, throwIfStopped, type ActionCall, type ActionHandler, type StopReason } from '../../core/index.js';
import type { DraftBlock } from './block-model.js';
import { updatedBy } from './provenance.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, invalid } from './access.js';
import { MAX_DOCUMENT_DEPTH } from './doc-catalog.js';
import { exportMarkdown } from './markdown-export.js';
import { outsideWorkspace } from './outside-workspace.js';
import { PARSE_WORKERS } from './markdown-parser.js';
import { importedText } from './import-undo.js';
import { prepareImport, type ImportDocWork, type ImportWork, type PreparedDocument } from './import-rows.js';
import { isObsidianVault, planObsidianImport } from './obsidian/obsidian-import.js';
import { planSiyuanImport } from './siyuan-import.js';

/** A chunk's work and what the worker made of it. */
interface Prepared { work: ImportWork; prepared: PreparedDocument[] }

type Flavor = 'markdown' | 'obsidian' | 'siyuan';
interface ImportInput { notebook: string; path: string; parentId?: string; flavor?: Flavor | 'auto' }

/** One document an import will create: from a file, or (path undefined) for a folder without one. */
interface Planned {
  id: string;
  title: string;
  parent: string | null;
  path: string | undefined;
  /** A folder's document without a file of its own: the folder (for messages). */
  folder?: string;
}

interface ImportState {
  rt: BlocksRuntime;
  call: ActionCall;
  notebook: string;
  documents: number;
  blocks: number;
  skipped: { path: string; reason: string }[];
  total: number;
  /** Files other than Markdown found (an Obsidian vault's attachments). */
  attachments: string[];
  /** Links of a plain Markdown import's notes to local files, now pointing into `assets/`. */
  attachmentLinks: number;
  flavor: Flavor;
  /** SiYuan document ids kept so far (a file name seen twice gets a new one). */
  siyuanIds: Set<string>;
  /** The import's folder in the journal, and how many steps it has recorded. */
  journalId: string;
  steps: number;
  /** The removal of its records, once begun. */
  forgetting?: { failed: boolean; done: Promise<void> };
  /** The path given, as the log names it should a crash cut the import short. */
  source: string;
}

/** What an interrupted import's job says of the documents it had written (import-undo.ts). */
const IF_INTERRUPTED = 'an import cut short before it answered is undone at the next start (the log names what was removed and what was kept)';

/** Documents written per step: their files in parallel, their rows in one transaction. */
const CHUNK = 64;
/** Skipped files an import's answer lists at most (the rest counted). */
const SKIPPED_LISTED = 1000;
/** Files and folders an import walks: at most this many entries, so a mistaken `/` cannot run for ever. */
const MAX_ENTRIES = 200_000;

export function importActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  return { markdown: (input, call) => importMarkdown(rt, call, input as unknown as ImportInput) };
}

export function exportActions(rt: BlocksRuntime): Record<string, ActionHandler> {
  return { markdown: (input, call) => exportMarkdown(rt, call, input as { id: string; folder: string; overwrite?: boolean }) };
}

/**
 * Imports a `.md` file, or a folder of them: each file becomes a document titled by its name; a folder
 * becomes a document (its `<name>.md` beside it, if any, gives its content) holding what is inside.
 * Symbolic links are not followed. Progress is reported as the import goes. A stop (time limit,
 * cancel) is honoured between chunks of documents: what was written stays, parents before children,
 * and the answer says how far it came.
 */
export async function importMarkdown(rt: BlocksRuntime, call: ActionCall, input: ImportInput) {
  const { store } = rt;
  if (!isAbsolute(input.path)) throw invalid('path must be an absolute path on this machine', { field: 'path' });
  assertNotebookVisible(store, call, input.notebook);
  if (input.parentId !== undefined) {
    assertDocumentVisible(store, call, input.parentId);
    if (store.entry(input.parentId).notebook !== input.notebook) throw invalid(`The parent document '${input.parentId}' is not in notebook '${input.notebook}'`, { field: 'parentId' });
  }
  const busy = rt.busyNotebooks.get(input.notebook);
  if (busy) throw new ConflictError('CONFLICT', `Notebook '${input.notebook}' is in use by ${busy}`, { details: { notebook: input.notebook } });
  // Marked busy before the first await, so that a removal arriving meanwhile cannot slip in.
  rt.busyNotebooks.set(input.notebook, `an import of ${input.path}`);
  const state: ImportState = { rt, call, notebook: input.notebook, documents: 0, blocks: 0, skipped: [], total: 0, attachments: [], attachmentLinks: 0, flavor: 'markdown', siyuanIds: new Set(), journalId: rt.imports.begin(), steps: 0, source: input.path };
  try {
    const source = await outsideWorkspace(resolve(input.path), rt.workspaceRoot, 'path');
    const info = await lstat(source).catch(() => undefined);
    if (!info || !(info.isFile() || info.isDirectory())) throw invalid(`Nothing to import at ${source}`, { field: 'path' });
    if (info.isFile() && !/\.(md|markdown|sy)$/i.test(source)) throw invalid(`Only Markdown files (.md, .markdown) and SiYuan documents (.sy) are imported; ${source} is not one`, { field: 'path' });
    const started = Date.now();
    const plan: Planned[] = [];
    const root = info.isDirectory() ? source : dirname(source);
    state.flavor = input.flavor !== undefined && input.flavor !== 'auto' ? input.flavor : await detectFlavor(source, info.isFile());
    if (info.isDirectory()) {
      await checkFolderSize(source);
      await planFolder(state, source, input.parentId ?? null, plan);
    } else {
      plan.push({ id: state.flavor === 'siyuan' ? keptId(state, titleOf(source)) : newId(), title: titleOf(source), parent: input.parentId ?? null, path: source });
    }
    state.total = plan.length;
    // Before the flavours' plans, which copy attachments (a refused import left them in assets/).
    assertFits(plan, input.parentId === undefined ? 0 : store.catalog.depth(input.parentId), source);
    const obsidian = state.flavor === 'obsidian'
      ? await planObsidianImport(call, root, plan.flatMap((doc) => (doc.path === undefined ? [] : [{ id: doc.id, path: doc.path }])), state.attachments, join(rt.workspaceRoot, 'assets'), rt.config.maxMarkdownChars)
      : undefined;
    const siyuan = state.flavor === 'siyuan'
      ? await planSiyuanImport(call, root, plan.flatMap((doc) => (doc.path === undefined ? [] : [{ id: doc.id, path: doc.path }])), (id) => store.catalog.doc(id) !== undefined || store.index.placeOf(id) !== undefined, rt.workspaceRoot, rt.config.maxMarkdownChars)
      : undefined;
    if (siyuan) {
      // Renewed ids (an import of documents this workspace has already) apply to parents too.
      for (const doc of plan) {
        doc.id = siyuan.idOf(doc.id);
        if (doc.parent !== null && doc.parent !== input.parentId) doc.parent = siyuan.idOf(doc.parent);
      }
    }
    const toWork = (doc: Planned): Promise<ImportDocWork> | ImportDocWork => obsidian?.work(doc) ?? siyuan?.work(doc) ?? { id: doc.id, title: doc.title, ...(doc.path === undefined ? {} : { path: doc.path }) };
    const chunks: Planned[][] = [];
    for (let i = 0; i < plan.length; i += CHUNK) chunks.push(plan.slice(i, i + CHUNK));
    const by = updatedBy(call);
    const prepare = async (chunk: Planned[]): Promise<Prepared> => {
      const work: ImportWork = {
        docs: await Promise.all(chunk.map(toWork)), maxChars: rt.config.maxMarkdownChars, by, now: new Date().toISOString(),
        ...(state.flavor === 'markdown' ? { attachments: { root, assets: join(rt.workspaceRoot, 'assets'), workspace: rt.workspaceRoot } } : {}),
      };
      return { work, prepared: await rt.files.prepareImport(work) };
    };
    throwIfStopped(call, `The import of ${source}`);
    call.progress({ done: 0, total: state.total, message: 'documents imported', ifInterrupted: IF_INTERRUPTED });
    // The next chunks are parsed and made ready to write (on the workers, one each) while this one is written.
    const parsing: Promise<Prepared>[] = [];
    let queued = 0;
    const parseAhead = (): void => {
      while (queued < chunks.length && parsing.length < PARSE_WORKERS) {
        const parsed = prepare(chunks[queued++]!);
        parsed.catch(() => undefined);
        parsing.push(parsed);
      }
    };
    parseAhead();
    let stopped: StopReason | undefined;
    for (let i = 0; i < chunks.length; i++) {
      const { work, prepared } = await parsing.shift()!;
      // The safe point: between chunks, before anything of the next one is written.
      stopped = call.stopped;
      if (stopped !== undefined) break;
      parseAhead();
      await importChunk(state, chunks[i]!, work, prepared);
    }
    const seconds = (Date.now() - started) / 1000;
    const done = {
      // The first SKIPPED_LISTED: the answer is kept with its job (200 of them), and 10,000 notes with a missing attachment each made it 2.8 MB.
      notebook: input.notebook, flavor: state.flavor, documents: state.documents, blocks: state.blocks, skipped: state.skipped.slice(0, SKIPPED_LISTED), seconds,
      ...(state.skipped.length > SKIPPED_LISTED ? { skippedCount: state.skipped.length } : {}),
      ...(obsidian ? { obsidian: obsidian.report() } : {}),
      ...(siyuan ? { siyuan: siyuan.report() } : {}),
      ...(state.attachmentLinks > 0 ? { attachmentLinks: state.attachmentLinks } : {}),
    };
    // Answered (done or stopped): what it wrote is the call's to report, no longer a crash's to undo.
    await forgetSteps(rt, state);
    if (stopped === undefined) return done;
    return { ...done, stopped, planned: state.total, message: `imported ${state.documents} of ${state.total} documents, ${stoppedNote(stopped)}; the rest was not written` };
  } catch (error) {
    // Failed, it keeps what it wrote, and says so. Should its records stay (they could not be removed),
    // the next start undoes the whole import instead, and it says that: either way it is whole.
    // (When the removal of the records is what failed, that error is the answer as it is.)
    if (state.forgetting?.failed) throw error;
    const forgotten = await forgetSteps(rt, state).then(() => true, () => false);
    throw withWhatWasImported(error, state, forgotten);
  } finally {
    rt.busyNotebooks.delete(input.notebook);
  }
}

/**
 * A failure after some steps were written names how many documents were imported (the steps written
 * are whole: a step that fails leaves none of its documents), and whether they stay.
 */
function withWhatWasImported(error: unknown, state: ImportState, forgotten: boolean): unknown {
  if (state.documents === 0) return error;
  const known = isKernelError(error);
  const message = known ? error.message : `The import failed: ${error instanceof Error ? error.message : String(error)}.`;
  const fate = forgotten ? 'and stay' : 'and go again at the next start (its records could not be removed)';
  return new KernelError(known ? error.code : 'INTERNAL', `${message} The import stopped there: ${state.documents} of ${state.total} documents were imported before it, ${fate}; the rest was not written`,
    { cause: error, details: { ...(known ? error.details : {}), documentsImported: state.documents, planned: state.total, documentsStay: forgotten } });
}

/**
 * The records go before the answer, once (a second call answers as the first). One that cannot be
 * removed would make the next start undo an import that answered, so the import fails instead, saying so.
 */
function forgetSteps(rt: BlocksRuntime, state: ImportState): Promise<void> {
  if (state.steps === 0) return Promise.resolve();
  if (state.forgetting) return state.forgetting.done;
  const forgetting: NonNullable<ImportState['forgetting']> = { failed: false, done: Promise.resolve() };
  forgetting.done = rt.imports.done(state.journalId).catch((error: unknown) => {
    forgetting.failed = true;
    throw new KernelError('INTERNAL', `The import's documents were written, but its records (.quire/journal/imports/${state.journalId}/) could not be removed: the next start will remove the documents again. ${(error as Error).message}`, { cause: error });
  });
  state.forgetting = forgetting;
  return forgetting.done;
}

/**
 * Every planned document within MAX_DOCUMENT_DEPTH, checked before the first is written: checked as
 * each chunk was written, a deep folder stopped the import half-way, what came before it kept.
 */
function assertFits(plan: readonly Planned[], base: number, source: string): void {
  const depth = new Map<string, number>();
  for (const doc of plan) {
    const level = (doc.parent === null ? base : depth.get(doc.parent) ?? base) + 1;
    depth.set(doc.id, level);
    if (level > MAX_DOCUMENT_DEPTH) {
      const at = doc.path ?? doc.folder;
      const where = at === undefined ? doc.title : relative(source, at) || basename(at);
      throw invalid(`Documents nest at most ${MAX_DOCUMENT_DEPTH} deep; '${where}' would be ${level} deep: nothing was imported`, { field: 'path', file: where, depth: level, max: MAX_DOCUMENT_DEPTH });
    }
  }
}

/**
 * Lays out what an import creates, parents before children: each `.md` file is a document; a folder is
 * the document of the same-named file beside it, or a document of its own when there is none.
 */
async function planFolder(state: ImportState, folder: string, parent: string | null, plan: Planned[]): Promise<void> {
  let listed: Dirent[];
  try {
    listed = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    // One folder that cannot be read (no permission, removed meanwhile) is skipped and said; the import goes on.
    state.skipped.push({ path: folder, reason: `the folder cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` });
    return;
  }
  const entries = listed.sort((a, b) => a.name.localeCompare(b.name));
  const folders = new Set(entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) {
      // A hidden note, or a hidden folder holding notes, is not read, and said (it was left out unlisted);
      // a tool's own folder (a vault's settings, a repository's history, a sync tool's) and what holds no
      // note are left out unsaid (listed, they made a clean import exit 1).
      const at = join(folder, entry.name);
      if (entry.isFile() && isDocumentName(entry.name.toLowerCase(), state.flavor)) state.skipped.push({ path: at, reason: 'hidden (its name starts with a dot): not imported' });
      else if (entry.isDirectory() && !isToolFolder(entry.name) && await holdsNote(at, state.flavor)) state.skipped.push({ path: at, reason: 'hidden (its name starts with a dot): the notes in it are not imported' });
      continue;
    }
    const path = join(folder, entry.name);
    if (entry.isSymbolicLink()) { state.skipped.push({ path, reason: 'symbolic links are not followed' }); continue; }
    const isDocument = entry.isFile() && isDocumentName(entry.name.toLowerCase(), state.flavor);
    if (entry.isFile() && !isDocument && state.flavor === 'obsidian') state.attachments.push(path);
    if (!isDocument) continue;
    // A SiYuan document keeps its id (its file's name; its children are in the folder of that name).
    const doc: Planned = { id: state.flavor === 'siyuan' ? keptId(state, titleOf(path)) : newId(), title: titleOf(path), parent, path };
    plan.push(doc);
    if (folders.delete(doc.title)) await planFolder(state, join(folder, doc.title), doc.id, plan);
  }
  for (const name of folders) {
    const doc: Planned = { id: newId(), title: name, parent, path: undefined, folder: join(folder, name) };
    const inside: Planned[] = [];
    await planFolder(state, join(folder, name), doc.id, inside);
    // A folder with no note anywhere below it (attachments, a vault's images) is no document.
    if (inside.some((entry) => entry.path !== undefined)) plan.push(doc, ...inside);
  }
}

/** Hidden folders of the tools that keep or sync notes, not notes: left out of an import without a word, unread. */
const TOOL_FOLDERS: ReadonlySet<string> = new Set(['.obsidian', '.trash', '.git', '.siyuan', '.github', '.vscode', '.idea', '.stfolder', '.stversions', '.Trashes', '.Spotlight-V100', '.fseventsd']);
const isToolFolder = (name: string): boolean => TOOL_FOLDERS.has(name) || name.startsWith('.Trash-');
/** Entries a hidden folder is searched through for a note, at most: a large one is taken to hold some. */
const HIDDEN_LOOKS = 2_000;

/** Whether a hidden folder holds a note anywhere below it (read breadth first, at most HIDDEN_LOOKS entries). */
async function holdsNote(folder: string, flavor: Flavor): Promise<boolean> {
  const queue = [folder];
  let looked = 0;
  while (queue.length > 0) {
    const entries = await readdir(queue.shift()!, { withFileTypes: true }).catch(() => [] as Dirent[]);
    for (const entry of entries) {
      if (++looked > HIDDEN_LOOKS) return true;
      if (entry.isFile() && isDocumentName(entry.name.toLowerCase(), flavor)) return true;
      if (entry.isDirectory()) queue.push(join(entry.parentPath, entry.name));
    }
  }
  return false;
}

/** A SiYuan export's documents are `.sy`, an Obsidian vault's notes `.md`; plain Markdown may be `.markdown` too. */
function isDocumentName(name: string, flavor: Flavor): boolean {
  if (flavor === 'siyuan') return name.endsWith('.sy');
  return name.endsWith('.md') || (flavor === 'markdown' && name.endsWith('.markdown'));
}

/** A file's title from its path on this system: a backslash is part of a name on Linux (`a\\b.md` is titled `a\\b`). */
function titleOf(path: string): string {
  return basename(path).replace(/\.(md|markdown|sy)$/i, '') || 'Untitled';
}

/** A SiYuan document's id from its file name, when it is one and not taken twice in the import. */
function keptId(state: ImportState, stem: string): string {
  if (!isValidId(stem) || state.siyuanIds.has(stem)) return newId();
  state.siyuanIds.add(stem);
  return stem;
}

/** `auto`: a `.sy` file or a folder of them (a SiYuan export) is SiYuan's; a folder with `.obsidian/` a vault. */
async function detectFlavor(source: string, isFile: boolean): Promise<Flavor> {
  if (isFile) return source.toLowerCase().endsWith('.sy') ? 'siyuan' : 'markdown';
  if (await isObsidianVault(source)) return 'obsidian';
  if ((await lstat(join(source, '.siyuan')).catch(() => undefined))?.isDirectory()) return 'siyuan';
  return (await readdir(source)).some((name) => name.toLowerCase().endsWith('.sy')) ? 'siyuan' : 'markdown';
}

/**
 * Writes a chunk of documents made ready on a worker as one step of the write queue. The workers gave
 * the blocks their ids; if one of them was already issued in this process (two threads drew the same),
 * the chunk is made again here, where newId guarantees none repeats. Ids the work brought (headings that
 * and blocks that links point to, given out here; a SiYuan document's own) are not the worker's and not claimed.
 */
async function importChunk(state: ImportState, chunk: Planned[], work: ImportWork, prepared: PreparedDocument[]): Promise<void> {
  const { rt } = state;
  const ahead = new Set(work.docs.flatMap((doc) => [...Object.values(doc.headingIds ?? {}), ...Object.values(doc.blockIds ?? {}), ...draftIds(doc.drafts ?? [])]));
  const ids: string[] = [];
  for (const doc of prepared) for (let i = 1; i < doc.blocks.length; i++) if (!ahead.has(doc.blocks[i]!.values[0])) ids.push(doc.blocks[i]!.values[0]);
  // Made again on this thread, where materialise draws its ids from the one source that never repeats.
  if (!claimIds(ids)) prepared = prepareImport(work);
  let blocks = 0;
  for (const [i, doc] of prepared.entries()) {
    if (doc.problem !== undefined) state.skipped.push({ path: chunk[i]!.path!, reason: `${doc.problem}: imported as an empty document` });
    if (doc.note !== undefined) state.skipped.push({ path: chunk[i]!.path!, reason: doc.note });
    if (doc.unplacedBlocks) state.skipped.push({ path: chunk[i]!.path!, reason: `links point to block identifiers the note does not end a block with: ${doc.unplacedBlocks.slice(0, 5).map((key) => `^${key}`).join(', ')}` });
    if (doc.unplacedHeadings) state.skipped.push({ path: chunk[i]!.path!, reason: `links point to headings the note does not have as headings: ${doc.unplacedHeadings.slice(0, 5).join(', ')}` });
    if (doc.linksLeft) state.skipped.push({ path: chunk[i]!.path!, reason: `links to local files kept as written (outside the folder imported, missing, or over 256 MiB): ${doc.linksLeft.slice(0, 5).join(', ')}` });
    state.attachmentLinks += doc.attachmentLinks ?? 0;
    blocks += doc.blocks.length;
  }
  const docs = prepared.map((doc, i) => ({ doc, entry: { id: doc.id, notebook: state.notebook, parent: chunk[i]!.parent, title: doc.title } }));
  // Each step recorded before its files are written: an import a crash cuts short is undone at the next start.
  await rt.store.queue.run(() => rt.store.createPrepared(docs, async (files) => {
    await rt.imports.step(state.journalId, state.steps++, { source: state.source, files: files.map(({ path, text }) => importedText(path, text)) });
  }));
  chunkDone(state, docs.length, blocks);
}

function draftIds(drafts: readonly DraftBlock[], into: string[] = []): string[] {
  for (const draft of drafts) {
    if (draft.id) into.push(draft.id);
    if (draft.children) draftIds(draft.children, into);
  }
  return into;
}

function chunkDone(state: ImportState, documents: number, blocks: number): void {
  state.documents += documents;
  state.blocks += blocks;
  state.call.log.info('import progress', { done: state.documents, total: state.total, blocks: state.blocks });
  state.call.progress({ done: state.documents, total: state.total, message: 'documents imported', ifInterrupted: IF_INTERRUPTED });
}

/** Refuses folders too large to be meant (a mistaken `/`), before anything is written. */
async function checkFolderSize(folder: string): Promise<void> {
  let entries = 0;
  const stack = [folder];
  while (stack.length > 0) {
    const current = stack.pop()!;
    // A folder below that cannot be read is skipped here and reported by planFolder; the top one fails the import.
    for (const entry of await readdir(current, { withFileTypes: true }).catch((error: unknown) => { if (current === folder) throw error; return []; })) {
      if (entry.name.startsWith('.')) continue;
      if (++entries > MAX_ENTRIES) throw invalid(`The folder holds more than ${MAX_ENTRIES} entries; import it in parts`, { field: 'path' });
      if (entry.isDirectory()) stack.push(join(current, entry.name));
    }
  }
}
