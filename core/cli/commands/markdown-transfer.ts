import { resolve } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { isKernelError, KernelError } from '../../errors.js';
import { isValidId } from '../../ids.js';
import type { Kernel } from '../../kernel.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';
import { namedAs, resolveDocument, type ActionCaller } from '../notes-access.js';
import type { ObsidianPlan } from '../../../plugins/blocks/obsidian/obsidian-import.js';
import type { SiyuanReport } from '../../../plugins/blocks/siyuan-import.js';

export const importCommand: Command = {
  name: 'import',
  summary: 'import a Markdown file or folder into a notebook',
  help: `Usage: quire import <path> --notebook <id or name> [--parent <document id>] [--flavor auto|markdown|obsidian|siyuan] [--workspace <dir>]

Each .md file becomes a document titled by its file name; each folder becomes a document holding what
is inside it (a file <name>.md beside a folder <name>/ gives that document its content). Progress is
shown as the import goes. An Obsidian vault (a folder holding .obsidian/) is read as Obsidian writes
it (front matter, [[links]], #tags, callouts, attachments); a SiYuan export (.sy files) keeps its ids.

Options:
  -n, --notebook <id>     notebook to import into, by id or by name
  -p, --parent <id>       import under this document
      --flavor <name>     auto (default), markdown, obsidian or siyuan
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, notebook: { type: 'string', short: 'n' }, parent: { type: 'string', short: 'p' }, flavor: { type: 'string' } }, io, 'import', { max: 1, hint: 'to import many files, give the folder that holds them' });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const [path] = parsed.positionals;
    if (!path || typeof parsed.values.notebook !== 'string') {
      io.err('quire import: give a path and --notebook <id>');
      return EXIT_USAGE;
    }
    const notebook = parsed.values.notebook;
    const input: Record<string, unknown> = { path: resolve(path) };
    if (typeof parsed.values.parent === 'string') input.parentId = parsed.values.parent;
    if (typeof parsed.values.flavor === 'string') input.flavor = parsed.values.flavor;
    try {
      const result = await withKernel(String(parsed.values.workspace ?? './workspace'), io, async (kernel) => {
        input.notebook = isValidId(notebook) ? notebook : await notebookByName(kernel, notebook);
        return callAction(kernel, 'import_markdown', input, io);
      });
      io.out(`imported ${String(result.documents)} document(s), ${String(result.blocks)} block(s) in ${Number(result.seconds).toFixed(1)} s (${String(result.flavor)})`);
      for (const line of flavorReport(result)) io.out(line);
      const skipped = result.skipped as { path: string; reason: string }[];
      for (const item of skipped) io.err(`skipped ${item.path}: ${item.reason}`);
      if (result.stopped !== undefined) io.err(`quire import: ${String(result.message)}`);
      return skipped.length > 0 || result.stopped !== undefined ? EXIT_PROBLEMS : EXIT_OK;
    } catch (error) {
      io.err(`quire import: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

export const exportCommand: Command = {
  name: 'export',
  summary: 'export a notebook or document as Markdown files',
  help: `Usage: quire export <notebook or document: id, name or path> <folder> [--obsidian] [--overwrite] [--workspace <dir>]

A notebook by its id or name, a document by its id or its path of names (Notebook/Document/Child).
Writes <title>.md for the document (or each top-level document of the notebook), and a folder
<title>/ beside it for the documents below it.

Options:
      --obsidian          write a vault Obsidian opens: front matter, [[links]], #tags, callouts, assets/
      --overwrite         replace files that already exist
  -w, --workspace <dir>   workspace folder (default: ./workspace)`,
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, overwrite: { type: 'boolean' }, obsidian: { type: 'boolean' } }, io, 'export', { max: 2, hint: 'quote a name that holds spaces' });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const [id, folder] = parsed.positionals;
    if (!id || !folder) {
      io.err('quire export: give an id and a folder');
      return EXIT_USAGE;
    }
    try {
      const result = await withKernel(String(parsed.values.workspace ?? './workspace'), io, async (kernel) => {
        const call: ActionCaller = async <T,>(wire: string, _path: string, input: Record<string, unknown>) => await callAction(kernel, wire, input) as T;
        return callAction(kernel, 'export_markdown', { id: await notebookOrDocument(call, id), folder: resolve(folder), overwrite: parsed.values.overwrite === true, ...(parsed.values.obsidian === true ? { flavor: 'obsidian' } : {}) }, io);
      });
      io.out(`wrote ${String(result.files)} file(s) to ${String(result.folder)}`);
      if (result.stopped !== undefined) io.err(`quire export: ${String(result.message)}`);
      return result.stopped !== undefined ? EXIT_PROBLEMS : EXIT_OK;
    } catch (error) {
      // The action names its own input (`overwrite: true`); at the terminal that is a flag.
      const existing = isKernelError(error) && error.code === 'CONFLICT' ? (error.details as { file?: unknown } | undefined)?.file : undefined;
      io.err(`quire export: ${typeof existing === 'string' ? `${existing} already exists; give --overwrite to replace it (nothing was written)` : describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

/** What an Obsidian or SiYuan import changed and could not map, a line each. */
function flavorReport(result: Record<string, unknown>): string[] {
  const obsidian = result.obsidian as ReturnType<ObsidianPlan['report']> | undefined;
  const siyuan = result.siyuan as SiyuanReport | undefined;
  if (obsidian) {
    return [
      `  ${obsidian.links} links, ${obsidian.embeds} embeds, ${obsidian.tags} tags, front matter in ${obsidian.frontMatter} notes, ${obsidian.attachments.copied} attachments copied`,
      `  ${obsidian.unresolvedCount} links to notes not in the vault (kept as text), ${obsidian.approximatedCount} to blocks or headings the notes do not have (pointing at the note)`,
      ...obsidian.unresolved.slice(0, 10).map((item) => `    ${item.file}: ${item.link}`),
    ];
  }
  if (siyuan) {
    return [
      `  ids ${siyuan.ids}, ${siyuan.references} references (${siyuan.referencesOutside} to blocks not imported), ${siyuan.assets.copied} assets copied, ${siyuan.assets.missing.length} missing`,
      ...siyuan.problems.slice(0, 10).map((item) => `    ${item.file}: ${item.problem}`),
    ];
  }
  return [];
}

/**
 * A notebook named on the command line: its name must match exactly one notebook, exactly, else case
 * aside (`Work` beside `work` was "several notebooks", though one is named as given, as `export` picks it).
 */
async function notebookByName(kernel: Kernel, name: string): Promise<string> {
  const { notebooks } = await callAction(kernel, 'notebook_list', {}) as { notebooks: { id: string; name: string }[] };
  const matches = namedAs(notebooks, name, 'name');
  if (matches.length === 1) return matches[0]!.id;
  const known = notebooks.map((notebook) => `${notebook.name} (${notebook.id})`).join(', ') || 'none';
  throw new KernelError('NOT_FOUND', matches.length === 0 ? `No notebook named '${name}'; notebooks: ${known}` : `Several notebooks are named '${name}'; give its id: ${known}`);
}

/** A notebook by id or name, else a document by id or path (notes-access.ts). */
async function notebookOrDocument(call: ActionCaller, given: string): Promise<string> {
  if (/^\d{14}-[0-9a-z]{7}$/.test(given)) return given;
  const { notebooks } = await call<{ notebooks: { id: string; name: string }[] }>('notebook_list', 'blocks/notebook/list', {});
  const [notebook] = namedAs(notebooks, given, 'name');
  return notebook ? notebook.id : resolveDocument(call, given);
}
