import { lstat, readdir, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { ConflictError, type ActionCall, type ActionHandler } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, invalid } from './access.js';
import { createDocument } from './document-actions.js';
import { exportMarkdown } from './markdown-export.js';

interface ImportInput { notebook: string; path: string; parentId?: string }

interface ImportState {
  rt: BlocksRuntime;
  call: ActionCall;
  notebook: string;
  documents: number;
  blocks: number;
  skipped: { path: string; reason: string }[];
  total: number;
}

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
 * Symbolic links are not followed. Progress is logged as the import goes.
 */
export async function importMarkdown(rt: BlocksRuntime, call: ActionCall, input: ImportInput) {
  const { store } = rt;
  if (!isAbsolute(input.path)) throw invalid('path must be an absolute path on this machine', { field: 'path' });
  assertNotebookVisible(store, call, input.notebook);
  if (input.parentId !== undefined) {
    assertDocumentVisible(store, call, input.parentId);
    if (store.entry(input.parentId).notebook !== input.notebook) throw invalid(`The parent document '${input.parentId}' is not in notebook '${input.notebook}'`, { field: 'parentId' });
  }
  const source = resolve(input.path);
  const busy = rt.busyNotebooks.get(input.notebook);
  if (busy) throw new ConflictError('CONFLICT', `Notebook '${input.notebook}' is in use by ${busy}`, { details: { notebook: input.notebook } });
  // Marked busy before the first await, so that a removal arriving meanwhile cannot slip in.
  rt.busyNotebooks.set(input.notebook, `an import of ${source}`);
  const state: ImportState = { rt, call, notebook: input.notebook, documents: 0, blocks: 0, skipped: [], total: 0 };
  try {
    const info = await lstat(source).catch(() => undefined);
    if (!info || !(info.isFile() || info.isDirectory())) throw invalid(`Nothing to import at ${source}`, { field: 'path' });
    state.total = info.isDirectory() ? await countFiles(source) : 1;
    const started = Date.now();
    await rt.store.index.batch(async () => {
      if (info.isDirectory()) await importFolder(state, source, input.parentId);
      else await importFile(state, source, input.parentId);
    });
    const seconds = (Date.now() - started) / 1000;
    return { notebook: input.notebook, documents: state.documents, blocks: state.blocks, skipped: state.skipped, seconds };
  } finally {
    rt.busyNotebooks.delete(input.notebook);
  }
}

async function importFolder(state: ImportState, folder: string, parentId: string | undefined): Promise<void> {
  const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const folders = new Set(entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.isSymbolicLink()) { state.skipped.push({ path, reason: 'symbolic links are not followed' }); continue; }
    if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) {
      const title = entry.name.slice(0, -3);
      const id = await importFile(state, path, parentId);
      // `notes.md` beside `notes/`: the folder's documents become children of that file's document.
      if (id && folders.has(title)) {
        folders.delete(title);
        await importFolder(state, join(folder, title), id);
      }
    }
  }
  for (const name of folders) {
    const created = await createDocument(state.rt, state.call, { notebook: state.notebook, title: name, parentId, drafts: [] });
    state.documents++;
    state.blocks += created.blockCount;
    await importFolder(state, join(folder, name), created.id);
  }
}

async function importFile(state: ImportState, path: string, parentId: string | undefined): Promise<string | undefined> {
  const { rt } = state;
  const markdown = await readFile(path, 'utf8');
  if (markdown.length > rt.config.maxMarkdownChars) {
    state.skipped.push({ path, reason: `larger than ${rt.config.maxMarkdownChars} characters` });
    return undefined;
  }
  const title = (path.split(/[\\/]/).pop() ?? path).replace(/\.md$/i, '') || 'Untitled';
  const created = await createDocument(rt, state.call, { notebook: state.notebook, title, parentId, drafts: rt.markdownToBlocks(markdown) });
  state.documents++;
  state.blocks += created.blockCount;
  if (state.documents % 100 === 0 || state.documents === state.total) {
    rt.store.index.checkpointBatch();
    state.call.log.info('import progress', { done: state.documents, total: state.total, blocks: state.blocks });
  }
  return created.id;
}

/** The number of `.md` files below a folder (for progress), refusing folders too large to be meant. */
async function countFiles(folder: string): Promise<number> {
  let files = 0;
  let entries = 0;
  const stack = [folder];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      if (++entries > MAX_ENTRIES) throw invalid(`The folder holds more than ${MAX_ENTRIES} entries; import it in parts`, { field: 'path' });
      if (entry.isDirectory()) stack.push(join(current, entry.name));
      else if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) files++;
    }
  }
  return files;
}
