import { resolve } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { resolveDocument, withNotes, type ActionCaller } from '../notes-access.js';
import { describeError } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

type Values = Record<string, string | boolean | undefined>;

/**
 * A reading command for people at the terminal: `--json` prints the action's answer for scripts,
 * otherwise `print` lays it out. Talks to the serving kernel when there is one (notes-access.ts).
 */
function readingCommand(name: string, summary: string, usage: string, run: (call: ActionCaller, positionals: string[], values: Values) => Promise<unknown>,
  print: (value: unknown, io: CliIO) => void, extra: Record<string, { type: 'string' | 'boolean'; short?: string }> = {}, extraHelp: string[] = [], maxPositionals = Number.POSITIVE_INFINITY, minPositionals = 1): Command {
  const help = [`Usage: quire ${usage} [--json] [--workspace <dir>]`, '', 'Options:', '      --json              the answer as JSON, for scripts', '  -w, --workspace <dir>   workspace folder (default: ./workspace)', ...extraHelp,
    '', 'Talks to the kernel serving the workspace when there is one; otherwise opens it for this command.'].join('\n');
  return {
    name, summary, help,
    async run(args, io) {
      const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, json: { type: 'boolean' }, ...extra }, io, name, { max: maxPositionals });
      if (!parsed) return EXIT_USAGE;
      if (parsed.values.help) return io.out(help), EXIT_OK;
      // Said before the workspace is opened (a kernel started, its lock taken, only to print the usage).
      if (parsed.positionals.join(' ').trim() === '' && minPositionals > 0) {
        io.err(`quire ${name}: ${help.split('\n')[0]}`);
        return EXIT_USAGE;
      }
      try {
        const value = await withNotes(resolve(String(parsed.values.workspace ?? './workspace')), io, (call) => run(call, parsed.positionals, parsed.values));
        if (value === undefined) {
          io.err(`quire ${name}: ${help.split('\n')[0]}`);
          return EXIT_USAGE;
        }
        if (parsed.values.json) io.out(JSON.stringify(value, null, 2));
        else print(value, io);
        return EXIT_OK;
      } catch (error) {
        io.err(`quire ${name}: ${describeError(error)}`);
        return error instanceof UsageError ? EXIT_USAGE : EXIT_PROBLEMS;
      }
    },
  };
}

/** The command line was wrong (exit 2), found once the command runs. */
class UsageError extends Error {}

interface Notebook { id: string; name: string; access: string; documents: number }
interface DocumentEntry { id: string; title: string; childDocuments: number }
interface Hit { id: string; documentId: string; hpath: string; snippet: string }

const notebooksCommand = readingCommand('notebooks', 'list the notebooks', 'notebooks',
  (call) => call('notebook_list', 'blocks/notebook/list', {}),
  (value, io) => {
    const { notebooks } = value as { notebooks: Notebook[] };
    if (notebooks.length === 0) io.out('no notebooks');
    for (const notebook of notebooks) io.out(`${notebook.id}  ${notebook.name}  (${notebook.access}, ${notebook.documents} documents)`);
  }, {}, [], 0, 0);

const docsCommand = readingCommand('docs', 'list the documents of a notebook (or below a document)', 'docs <notebook id or name> [--parent <document id or path>]',
  async (call, positionals, values) => {
    // A name with spaces, unquoted, is its words (as `show` and `search` take theirs).
    const given = positionals.join(' ').trim();
    if (given === '') return undefined;
    const { notebooks } = await call<{ notebooks: Notebook[] }>('notebook_list', 'blocks/notebook/list', {});
    const notebook = notebooks.find((entry) => entry.id === given) ?? notebooks.find((entry) => entry.name === given) ?? notebooks.find((entry) => entry.name.toLowerCase() === given.toLowerCase());
    if (!notebook) {
      const names = notebooks.slice(0, 20).map((entry) => `'${entry.name}'`).join(', ');
      throw new Error(`no notebook '${given}' (${notebooks.length === 0 ? 'there are none' : `there are ${names}${notebooks.length > 20 ? `, and ${notebooks.length - 20} more: quire notebooks` : ''}`})`);
    }
    const parent = typeof values.parent === 'string' ? await resolveDocument(call, values.parent) : undefined;
    return call('document_list', 'blocks/document/list', { notebook: notebook.id, ...(parent ? { parentId: parent } : {}) });
  },
  (value, io) => {
    const { documents } = value as { documents: DocumentEntry[] };
    if (documents.length === 0) io.out('no documents');
    for (const doc of documents) io.out(`${doc.id}  ${doc.title}${doc.childDocuments > 0 ? `  (${doc.childDocuments} below)` : ''}`);
  }, { parent: { type: 'string' } }, ['      --parent <doc>      the documents below this one (id or path)']);

const showCommand = readingCommand('show', 'print a document (or a block) as Markdown', 'show <id or path such as Notebook/Document>',
  async (call, positionals) => {
    const given = positionals.join(' ').trim();
    if (given === '') return undefined;
    try {
      return await call('document_get_markdown', 'blocks/document/get_markdown', { id: await resolveDocument(call, given) });
    } catch (error) {
      // An id that is no document may be a block's; any other failure is said as it is.
      if (!/^\d{14}-[0-9a-z]{7}$/.test(given) || (error as { code?: string }).code !== 'NOT_FOUND') throw error;
      return call('block_get', 'blocks/block/get', { id: given });
    }
  },
  (value, io) => {
    const shown = value as { title?: string; markdown?: string };
    io.out(`${shown.title !== undefined ? `# ${shown.title}\n\n` : ''}${String(shown.markdown ?? '').replace(/\n$/, '')}`);
  });

/** The most of each arm's hits a hybrid search fuses (its schema's `depth.maximum`). */
const MAX_HYBRID_DEPTH = 1_000;

/** The deepest page a search answers (its schema's `page.maximum`). */
const MAX_PAGE = 10_000;

const searchCommand = readingCommand('search', 'search the notes (full text; hybrid when semantic search is on)', 'search <query> [--page <n>]',
  async (call, positionals, values) => {
    const query = positionals.join(' ').trim();
    if (query === '') return undefined;
    const page = values.page === undefined ? 1 : Number(values.page);
    if (!Number.isSafeInteger(page) || page < 1) throw new UsageError(`--page must be a positive whole number, not '${String(values.page)}'`);
    if (page > MAX_PAGE) throw new UsageError(`--page must be at most ${MAX_PAGE} (a search answers that many pages at most), not ${page}`);
    try {
      // Hybrid says itself when it falls back to full text (no embedder, semantic search off).
      // Fused at a depth that is the same for pages 1 to 10 (then 11 to 20, …), so that they are one
      // ranking; at the kernel's default of 50, page 4 or 5 was past the fused results.
      return await call('search_hybrid', 'search-fulltext/search/hybrid', { query, page, depth: Math.min(MAX_HYBRID_DEPTH, Math.ceil(page / 10) * 200) });
    } catch (error) {
      // Only when hybrid search is not there at all; any other failure is said as it is.
      if ((error as { code?: string }).code !== 'ACTION_NOT_FOUND') throw error;
      return call('search_fulltext', 'search-fulltext/search/fulltext', { query, page });
    }
  },
  (value, io) => {
    const answer = value as { results: Hit[]; total?: number; note?: string };
    if (answer.results.length === 0) io.out('no results');
    for (const hit of answer.results) io.out(`${hit.id}  ${hit.hpath}\n    ${hit.snippet.replace(/<\/?mark>/g, '*')}`);
    if (answer.note) io.out(`(${answer.note})`);
  }, { page: { type: 'string' } }, ['      --page <n>          the next page of results']);

export const notesCommands: readonly Command[] = [notebooksCommand, docsCommand, showCommand, searchCommand];
