import { mkdir, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { ConflictError, writeFileAtomic, type ActionCall } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, invalid } from './access.js';
import type { DocEntry } from './doc-catalog.js';
import { blocksToMarkdown } from './markdown-out.js';

interface ExportInput { id: string; folder: string; overwrite?: boolean }

/**
 * Writes a notebook or a document (with the documents below it) as Markdown files: `<title>.md`, and
 * a folder `<title>/` beside it for its child documents, the layout `import markdown` reads back.
 */
export async function exportMarkdown(rt: BlocksRuntime, call: ActionCall, input: ExportInput) {
  const { store } = rt;
  if (!isAbsolute(input.folder)) throw invalid('folder must be an absolute path on this machine', { field: 'folder' });
  const isNotebook = store.catalog.notebooks.has(input.id);
  if (isNotebook) assertNotebookVisible(store, call, input.id);
  else assertDocumentVisible(store, call, input.id);
  const target = resolve(input.folder);
  if (target === store.dataDir || target.startsWith(`${store.dataDir}/`)) throw invalid('Exporting into the workspace data folder would mix files with documents', { field: 'folder' });
  const top = isNotebook ? store.catalog.children(input.id, null) : [store.entry(input.id)];
  const written: string[] = [];
  await mkdir(target, { recursive: true });
  for (const entry of top) await exportDocument(rt, entry, target, input.overwrite === true, written);
  return { id: input.id, folder: target, files: written.length, written: written.slice(0, 1000) };
}

async function exportDocument(rt: BlocksRuntime, entry: DocEntry, folder: string, overwrite: boolean, written: string[]): Promise<void> {
  const { store } = rt;
  const root = await store.read(entry.id);
  const name = fileName(root.content ?? '', entry.id, folder, written);
  const file = join(folder, `${name}.md`);
  if (!overwrite && await stat(file).then(() => true, () => false)) {
    throw new ConflictError('CONFLICT', `${file} already exists; pass overwrite: true to replace it`, { details: { file } });
  }
  await writeFileAtomic(file, blocksToMarkdown(root.children ?? []));
  written.push(file);
  const children = store.catalog.children(entry.notebook, entry.id);
  if (children.length === 0) return;
  const sub = join(folder, name);
  await mkdir(sub, { recursive: true });
  for (const child of children) await exportDocument(rt, child, sub, overwrite, written);
}

/** A title made safe as a file name; two documents with one title in a folder get their ids added. */
function fileName(title: string, id: string, folder: string, written: string[]): string {
  // eslint-disable-next-line no-control-regex
  let name = title.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').replace(/^[.\s]+|[.\s]+$/g, '').slice(0, 120);
  if (name === '') name = id;
  if (written.includes(join(folder, `${name}.md`))) name = `${name} (${id})`;
  return name;
}
