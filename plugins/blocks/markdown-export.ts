import { mkdir, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConflictError, firstUtf8Bytes, stoppedNote, throwIfStopped, writeFileAtomic, type ActionCall } from '../../core/index.js';
import type { BlocksRuntime } from './runtime.js';
import { assertDocumentVisible, assertNotebookVisible, invalid } from './access.js';
import type { DocEntry } from './doc-catalog.js';
import { MarkdownAssets } from './markdown-assets.js';
import { blocksToMarkdown } from './markdown-out.js';
import { outsideWorkspace } from './outside-workspace.js';
import { writeFrontMatter } from './obsidian/front-matter.js';
import { toObsidianMarkdown } from './obsidian/obsidian-out.js';
import { ObsidianTargets } from './obsidian/obsidian-export.js';
import { withBlockIds } from './obsidian/block-ids.js';

interface ExportInput { id: string; folder: string; overwrite?: boolean; flavor?: 'markdown' | 'obsidian' }
export interface PlannedFile { file: string; doc: string }

/** At most this many documents per export, so that one call cannot run without end. */
const MAX_FILES = 100_000;

/**
 * Writes a notebook or a document (with the documents below it) as Markdown files: `<title>.md`, and
 * a folder `<title>/` beside it for its child documents, the layout `import markdown` reads back.
 * Every file is planned and checked first: an export that would overwrite without `overwrite`, or
 * write into the workspace, writes nothing.
 */
export async function exportMarkdown(rt: BlocksRuntime, call: ActionCall, input: ExportInput) {
  const { store } = rt;
  if (!isAbsolute(input.folder)) throw invalid('folder must be an absolute path on this machine', { field: 'folder' });
  const isNotebook = store.catalog.notebooks.has(input.id);
  if (isNotebook) assertNotebookVisible(store, call, input.id);
  else assertDocumentVisible(store, call, input.id);
  const target = await outsideWorkspace(resolve(input.folder), rt.workspaceRoot, 'folder', { mayContainIt: true, writes: true });
  const top = isNotebook ? store.catalog.children(input.id, null) : [store.entry(input.id)];
  const planned: PlannedFile[] = [];
  planFiles(rt, top, target, planned, input.flavor === 'obsidian');
  // Every document is read (and so checked) before anything is written: a broken one stops the export whole.
  const broken: string[] = [];
  const obsidian = input.flavor === 'obsidian' ? new ObsidianTargets(planned, target) : undefined;
  for (const { doc } of planned) {
    const root = await store.read(doc).catch(() => { broken.push(store.catalog.relativePath(doc)); });
    if (root) obsidian?.add(root);
  }
  if (broken.length > 0) throw invalid(`Some documents are not valid files and cannot be exported: ${broken.slice(0, 5).join(', ')}`, { field: 'id', files: broken.slice(0, 20) });
  if (input.overwrite !== true) {
    for (const { file } of planned) {
      if (await stat(file).then(() => true, () => false)) throw new ConflictError('CONFLICT', `${file} already exists; pass overwrite: true to replace it`, { details: { file } });
    }
  }
  await obsidian?.checkBeforeWriting(rt.workspaceRoot);
  const assets = obsidian ? undefined : new MarkdownAssets(target);
  if (assets) {
    // An `assets` folder already there may be a link into the workspace: refused before any file is written.
    const real = await realpath(join(target, 'assets')).catch(() => undefined);
    if (real !== undefined) await outsideWorkspace(real, rt.workspaceRoot, 'folder', { writes: true });
  }
  throwIfStopped(call, `The export of ${input.id}`);
  let written = 0;
  for (const { file, doc } of planned) {
    // The safe point: before each file; the files written so far are whole.
    const stopped = call.stopped;
    if (stopped !== undefined) {
      return { id: input.id, folder: target, flavor: input.flavor ?? 'markdown', files: written, planned: planned.length, written: planned.slice(0, Math.min(written, 1000)).map((item) => item.file), stopped,
        message: `wrote ${written} of ${planned.length} files and no attachments, ${stoppedNote(stopped)}` };
    }
    await mkdir(dirname(file), { recursive: true });
    // A folder already there may be a link into the workspace: checked where it really leads.
    await outsideWorkspace(await realpath(dirname(file)), rt.workspaceRoot, 'folder', { writes: true });
    const root = await store.read(doc);
    // Obsidian's block identifiers (`^key`) are written after the blocks that have one or that a link names.
    const children = obsidian ? withBlockIds(root.children ?? [], (block) => obsidian.keyOf(block.id)) : root.children ?? [];
    const markdown = blocksToMarkdown(children, { obsidian: obsidian !== undefined });
    // A document's own attributes (custom-*) go first as YAML front matter, which an import reads back;
    // without any, a first rule is written `***`, which no reader takes for the start of front matter.
    const front = writeFrontMatter(root.attrs);
    const body = front === '' && /^---[ \t]*\n/.test(markdown) ? `***${markdown.slice(3)}` : markdown;
    await writeFileAtomic(file, front + (obsidian ? toObsidianMarkdown(body, obsidian, obsidian.report) : assets!.rewrite(body, file)));
    written++;
    if (written % 16 === 0 || written === planned.length) call.progress({ done: written, total: planned.length, message: 'files written' });
  }
  const done = { id: input.id, folder: target, flavor: input.flavor ?? 'markdown', files: planned.length, written: planned.slice(0, 1000).map((item) => item.file) };
  if (obsidian) return { ...done, obsidian: await obsidian.finish(rt.workspaceRoot, input.overwrite === true) };
  const attachments = await assets!.finish(rt.workspaceRoot, input.overwrite === true);
  return attachments.linked > 0 ? { ...done, attachments } : done;
}

function planFiles(rt: BlocksRuntime, docs: DocEntry[], folder: string, out: PlannedFile[], obsidian: boolean): void {
  const used = new Set<string>();
  for (const entry of docs) {
    if (out.length >= MAX_FILES) throw invalid(`More than ${MAX_FILES} documents; export them in parts`, { field: 'id' });
    const name = fileName(entry.title, entry.id, used, obsidian);
    out.push({ file: join(folder, `${name}.md`), doc: entry.id });
    const children = rt.store.catalog.children(entry.notebook, entry.id);
    if (children.length > 0) planFiles(rt, children, join(folder, name), out, obsidian);
  }
}

/**
 * A title made safe as a file name; two documents with one title in a folder get their ids added. For
 * Obsidian also without `#`, `^`, `[` and `]`, which would cut a `[[link]]` to the note.
 */
function fileName(title: string, id: string, used: Set<string>, obsidian: boolean): string {
  // eslint-disable-next-line no-control-regex
  // 120 bytes, not characters: with ` (<id>)` and the temporary file's `.…md.<12 hex>.tmp` a name stays
  // under the 255 bytes of a file name (80 CJK characters passed it, and the export stopped part way).
  let name = firstUtf8Bytes(title.normalize('NFC').replace(obsidian ? /[\\/:*?"<>|\u0000-\u001f#^[\]]/g : /[\\/:*?"<>|\u0000-\u001f]/g, '_').replace(/^[.\s]+|[.\s]+$/g, ''), 120).replace(/[.\s]+$/, '');
  if (name === '') name = id;
  // Case and Unicode form folded: names differing only so are one file on some file systems (macOS).
  const key = name.toLowerCase();
  if (used.has(key)) name = `${name} (${id})`;
  used.add(name.toLowerCase());
  return name;
}
